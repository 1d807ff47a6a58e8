import { Anchor, Button, Group, Text } from "@mantine/core";
import { useState } from "react";
import type { Schemas } from "@herald/client";
import { herald } from "../api/herald";
import { useSession } from "../auth/session-context";
import { ConfirmButton } from "../components/confirm";
import { DataTable } from "../components/data-table";
import { ErrorAlert, Loading } from "../components/feedback";
import { formatTime, PageHeader } from "../components/page-header";
import { useCurrentApp } from "../layout/current-app";
import { canManageApps } from "../roles";
import { linkProps, navigate } from "../routing";
import { AppForm } from "./app-form";
import { PLATFORM_LABELS } from "./platforms";

export function AppsPage() {
  const { me } = useSession();
  const { apps, loading, error, reloadApps, selectApp } = useCurrentApp();
  const [editing, setEditing] = useState<Schemas["App"] | "new">();
  const manage = canManageApps(me.role);

  return (
    <>
      <PageHeader title="Apps">{manage && <Button onClick={() => setEditing("new")}>New app</Button>}</PageHeader>
      <ErrorAlert error={error} />
      {loading && apps.length === 0 ? (
        <Loading />
      ) : apps.length === 0 ? (
        <Text>No apps yet.{manage ? " Create one with New app." : ""}</Text>
      ) : (
        <DataTable
          minWidth={560}
          highlightOnHover
          rows={apps}
          rowKey={(app) => app.id}
          columns={[
            {
              header: "Name",
              cell: (app) => (
                <Anchor {...linkProps(`/apps/${app.id}`)} onClickCapture={() => selectApp(app.id)}>
                  {app.name}
                </Anchor>
              ),
            },
            { header: "Platform", cell: (app) => PLATFORM_LABELS[app.platform] },
            {
              header: "Bundle id",
              cell: (app) => (
                <Text ff="monospace" size="sm">
                  {app.bundle_id}
                </Text>
              ),
            },
            { header: "Created", cell: (app) => formatTime(app.created_at) },
            {
              header: "Actions",
              hidden: true,
              cell: (app) => (
                <Group gap="xs" justify="flex-end" wrap="nowrap">
                  <Button
                    size="xs"
                    variant="default"
                    aria-label={`Credentials of ${app.name}`}
                    onClick={() => {
                      selectApp(app.id);
                      navigate(`/apps/${app.id}`);
                    }}
                  >
                    Credentials
                  </Button>
                  {manage && (
                    <>
                      <Button
                        size="xs"
                        variant="default"
                        aria-label={`Edit ${app.name}`}
                        onClick={() => setEditing(app)}
                      >
                        Edit
                      </Button>
                      <ConfirmButton
                        label="Delete"
                        ariaLabel={`Delete ${app.name}`}
                        title={`Delete ${app.name}?`}
                        confirmLabel="Delete app"
                        call={() => herald.DELETE("/v1/apps/{app_id}", { params: { path: { app_id: app.id } } })}
                        success={`${app.name} deleted`}
                        onDone={reloadApps}
                      >
                        Its devices, platform credentials and API keys are deleted with it. This cannot be undone.
                      </ConfirmButton>
                    </>
                  )}
                </Group>
              ),
            },
          ]}
        />
      )}
      {editing && (
        <AppForm
          opened
          app={editing === "new" ? undefined : editing}
          onClose={() => setEditing(undefined)}
          onSaved={(saved) => {
            setEditing(undefined);
            reloadApps();
            selectApp(saved.id);
            if (editing === "new") navigate(`/apps/${saved.id}`);
          }}
        />
      )}
    </>
  );
}
