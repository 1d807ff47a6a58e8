import { Anchor, Button, Group, Table, Text } from "@mantine/core";
import { useState } from "react";
import type { Schemas } from "@herald/client";
import { herald } from "../api/herald";
import { useSession } from "../auth/session-context";
import { ConfirmButton } from "../components/confirm";
import { attempt, ErrorAlert, Loading } from "../components/feedback";
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
        <Table.ScrollContainer minWidth={560}>
          <Table striped highlightOnHover verticalSpacing="sm">
            <Table.Thead>
              <Table.Tr>
                <Table.Th>Name</Table.Th>
                <Table.Th>Platform</Table.Th>
                <Table.Th>Bundle id</Table.Th>
                <Table.Th>Created</Table.Th>
                <Table.Th>
                  <span className="mantine-visually-hidden">Actions</span>
                </Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {apps.map((app) => (
                <Table.Tr key={app.id}>
                  <Table.Td>
                    <Anchor {...linkProps(`/apps/${app.id}`)} onClickCapture={() => selectApp(app.id)}>
                      {app.name}
                    </Anchor>
                  </Table.Td>
                  <Table.Td>{PLATFORM_LABELS[app.platform]}</Table.Td>
                  <Table.Td>
                    <Text ff="monospace" size="sm">
                      {app.bundle_id}
                    </Text>
                  </Table.Td>
                  <Table.Td>{formatTime(app.created_at)}</Table.Td>
                  <Table.Td>
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
                            onConfirm={() =>
                              attempt(
                                () => herald.DELETE("/v1/apps/{app_id}", { params: { path: { app_id: app.id } } }),
                                `${app.name} deleted`,
                              ).then(reloadApps)
                            }
                          >
                            Its devices, platform credentials and API keys are deleted with it. This cannot be undone.
                          </ConfirmButton>
                        </>
                      )}
                    </Group>
                  </Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        </Table.ScrollContainer>
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
