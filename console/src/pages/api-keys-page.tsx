import { Button, Group, Modal, NumberInput, Select, Stack, Table, Text, TextInput } from "@mantine/core";
import { useState } from "react";
import { type Schemas, unwrap } from "@herald/client";
import { errorMessage, herald } from "../api/herald";
import { useApi } from "../api/use-api";
import { useSession } from "../auth/session-context";
import { ConfirmButton } from "../components/confirm";
import { attempt, ErrorAlert, Loading } from "../components/feedback";
import { NoApp } from "../components/no-app";
import { formatTime, PageHeader } from "../components/page-header";
import { Pager } from "../components/pager";
import { SecretOnce } from "../components/secret-once";
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
      <ErrorAlert error={keys.error} />
      {!keys.data ? (
        <Loading />
      ) : keys.data.data.length === 0 ? (
        <Text>No API keys for {app?.name}.</Text>
      ) : (
        <Table.ScrollContainer minWidth={640}>
          <Table striped verticalSpacing="sm">
            <Table.Thead>
              <Table.Tr>
                <Table.Th>Name</Table.Th>
                <Table.Th>Prefix</Table.Th>
                <Table.Th>Kind</Table.Th>
                <Table.Th>Scope</Table.Th>
                <Table.Th>Rate limit</Table.Th>
                <Table.Th>Created</Table.Th>
                <Table.Th aria-label="Actions" />
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {keys.data.data.map((key) => (
                <Table.Tr key={key.id}>
                  <Table.Td>{key.name}</Table.Td>
                  <Table.Td>
                    <Text ff="monospace" size="sm">
                      {key.prefix}…
                    </Text>
                  </Table.Td>
                  <Table.Td>{key.kind === "client" ? "Client" : "Server"}</Table.Td>
                  <Table.Td>{key.scope === "org" ? "Organization" : "This app"}</Table.Td>
                  <Table.Td>{key.rate_limit_per_minute.toLocaleString()}/min</Table.Td>
                  <Table.Td>{formatTime(key.created_at)}</Table.Td>
                  <Table.Td>
                    {manage && (
                      <ConfirmButton
                        label="Revoke"
                        ariaLabel={`Revoke ${key.name}`}
                        title={`Revoke ${key.name}?`}
                        confirmLabel="Revoke key"
                        onConfirm={() =>
                          attempt(
                            () =>
                              herald.DELETE("/v1/apps/{app_id}/api-keys/{key_id}", {
                                params: { path: { app_id: key.app_id, key_id: key.id } },
                              }),
                            `${key.name} revoked`,
                          ).then(keys.reload)
                        }
                      >
                        Requests with this key are refused from now on (within seconds on every gateway).
                      </ConfirmButton>
                    )}
                  </Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        </Table.ScrollContainer>
      )}
      {keys.data && <Pager page={page} perPage={PER_PAGE} total={keys.data.total} onChange={setPage} />}
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
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string>();
  const [created, setCreated] = useState<Schemas["CreatedApiKey"]>();

  const submit = async () => {
    setError(undefined);
    if (!name.trim()) return setError("Give the key a name.");
    setBusy(true);
    try {
      setCreated(
        unwrap(
          await herald.POST("/v1/apps/{app_id}/api-keys", {
            params: { path: { app_id: app.id } },
            body: {
              name: name.trim(),
              kind,
              scope: kind === "client" ? "app" : scope,
              ...(rateLimit === "" ? {} : { rate_limit_per_minute: Number(rateLimit) }),
            },
          }),
        ),
      );
    } catch (err) {
      setError(errorMessage(err));
    } finally {
      setBusy(false);
    }
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
        <Stack>
          <SecretOnce label={`Secret of ${created.name}`} value={created.secret} what="secret" />
          <Group justify="flex-end">
            <Button onClick={onClose}>I have copied it</Button>
          </Group>
        </Stack>
      ) : (
        <form
          noValidate
          onSubmit={(e) => {
            e.preventDefault();
            void submit();
          }}
        >
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
            {error && (
              <Text role="alert" c="red.8" size="sm">
                {error}
              </Text>
            )}
            <Group justify="flex-end">
              <Button variant="default" onClick={onClose}>
                Cancel
              </Button>
              <Button type="submit" loading={busy}>
                Create key
              </Button>
            </Group>
          </Stack>
        </form>
      )}
    </Modal>
  );
}
