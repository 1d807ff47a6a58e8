import { Button, Modal, NumberInput, Select, Stack, Text, TextInput } from "@mantine/core";
import { useState } from "react";
import { type Schemas, unwrap } from "@herald/client";
import { herald } from "../api/herald";
import { useApi } from "../api/use-api";
import { useSession } from "../auth/session-context";
import { ConfirmButton } from "../components/confirm";
import { ApiList } from "../components/api-list";
import { DataTable } from "../components/data-table";
import { NoApp } from "../components/no-app";
import { formatTime, PageHeader } from "../components/page-header";
import { SecretOnce } from "../components/secret-once";
import { FormActions, FormError, SubmitForm, useSubmit } from "../components/submit-form";
import { useRequiredApp } from "../layout/app-picker";
import { canManageApps } from "../roles";

const PER_PAGE = 50;

export function ApiKeysPage() {
  const { me } = useSession();
  const { app, noApps } = useRequiredApp();
  const [page, setPage] = useState(1);
  const [creating, setCreating] = useState(false);
  const keys = useApi(
    "/v1/apps/{app_id}/api-keys",
    app ? { params: { path: { app_id: app.id }, query: { page, per_page: PER_PAGE } } } : null,
  );
  const manage = canManageApps(me.role);

  if (noApps) return <NoApp />;
  return (
    <>
      <PageHeader title="API keys">
        {manage && app && <Button onClick={() => setCreating(true)}>New API key</Button>}
      </PageHeader>
      <ApiList
        list={keys}
        empty={`No API keys for ${app?.name}.`}
        paging={{ page, perPage: PER_PAGE, onChange: setPage }}
      >
        {(rows) => (
          <DataTable
            minWidth={640}
            rows={rows}
            rowKey={(key) => key.id}
            columns={[
              { header: "Name", cell: (key) => key.name },
              {
                header: "Prefix",
                cell: (key) => (
                  <Text ff="monospace" size="sm">
                    {key.prefix}…
                  </Text>
                ),
              },
              { header: "Kind", cell: (key) => (key.kind === "client" ? "Client" : "Server") },
              { header: "Scope", cell: (key) => (key.scope === "org" ? "Organization" : "This app") },
              { header: "Rate limit", cell: (key) => `${key.rate_limit_per_minute.toLocaleString()}/min` },
              { header: "Created", cell: (key) => formatTime(key.created_at) },
              {
                header: "Actions",
                hidden: true,
                cell: (key) =>
                  manage && (
                    <ConfirmButton
                      label="Revoke"
                      ariaLabel={`Revoke ${key.name}`}
                      title={`Revoke ${key.name}?`}
                      confirmLabel="Revoke key"
                      call={() =>
                        herald.DELETE("/v1/apps/{app_id}/api-keys/{key_id}", {
                          params: { path: { app_id: key.app_id, key_id: key.id } },
                        })
                      }
                      success={`${key.name} revoked`}
                      onDone={keys.reload}
                    >
                      Requests with this key are refused from now on (within seconds on every gateway).
                    </ConfirmButton>
                  ),
              },
            ]}
          />
        )}
      </ApiList>
      {creating && app && (
        <CreateKeyModal
          app={app}
          onClose={() => {
            setCreating(false);
            keys.reload();
          }}
        />
      )}
    </>
  );
}

/** Name, kind, scope and rate limit in; the secret out, shown once. */
function CreateKeyModal({ app, onClose }: { app: Schemas["App"]; onClose: () => void }) {
  const [name, setName] = useState("");
  const [kind, setKind] = useState<"server" | "client">("server");
  const [scope, setScope] = useState<"app" | "org">("app");
  // Empty: the service's default for the kind (client keys get a lower one).
  const [rateLimit, setRateLimit] = useState<number | string>("");
  const { busy, error, setError, run } = useSubmit();
  const [created, setCreated] = useState<Schemas["CreatedApiKey"]>();

  const submit = () => {
    if (!name.trim()) return setError("Give the key a name.");
    return run(async () => {
      const body = {
        name: name.trim(),
        kind,
        scope: kind === "client" ? "app" : scope,
        ...(rateLimit === "" ? {} : { rate_limit_per_minute: Number(rateLimit) }),
      } as const;
      setCreated(
        unwrap(await herald.POST("/v1/apps/{app_id}/api-keys", { params: { path: { app_id: app.id } }, body })),
      );
    });
  };

  return (
    <Modal
      opened
      onClose={onClose}
      title={created ? "API key created" : `New API key for ${app.name}`}
      centered
      size="lg"
    >
      {created ? (
        <SecretOnce
          label={`Secret of ${created.name}`}
          value={created.secret}
          what="secret"
          done={{ label: "I have copied it", onClick: onClose }}
        />
      ) : (
        <SubmitForm onSubmit={submit}>
          <Stack>
            <TextInput
              label="Name"
              required
              data-autofocus
              value={name}
              onChange={(e) => setName(e.currentTarget.value)}
            />
            <Select
              label="Kind"
              data={[
                { value: "server", label: "Server key: for your backends, full access within its scope" },
                { value: "client", label: "Client key: publishable, for apps; registers and manages its own device" },
              ]}
              value={kind}
              onChange={(v) => v && setKind(v as "server" | "client")}
              allowDeselect={false}
            />
            <Select
              label="Scope"
              disabled={kind === "client"}
              description={kind === "client" ? "A client key always belongs to one app." : undefined}
              data={[
                { value: "app", label: `This app only (${app.name})` },
                { value: "org", label: "The whole organization" },
              ]}
              value={kind === "client" ? "app" : scope}
              onChange={(v) => v && setScope(v as "app" | "org")}
              allowDeselect={false}
            />
            <NumberInput
              label="Rate limit (requests per minute)"
              placeholder="The default for this kind of key"
              min={1}
              max={1_000_000}
              value={rateLimit}
              onChange={setRateLimit}
              allowDecimal={false}
            />
            <FormError error={error} />
            <FormActions onCancel={onClose} busy={busy} submit="Create key" />
          </Stack>
        </SubmitForm>
      )}
    </Modal>
  );
}
