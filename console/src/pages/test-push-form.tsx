import { Anchor, Button, Card, Group, Stack, Table, Text, TextInput, Title } from "@mantine/core";
import { useEffect, useState } from "react";
import { type Schemas, unwrap } from "@herald/client";
import { herald } from "../api/herald";
import { useApi } from "../api/use-api";
import { FormError, SubmitForm, useSubmit } from "../components/submit-form";
import { linkProps } from "../routing";
import { isRunning, StatusBadge } from "./campaign-status";

type Campaign = Schemas["Campaign"];

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * "Send test push" to one device: a campaign to exactly that device id
 * (POST /v1/push/send-to-devices), so it goes the way any campaign goes and its outcome
 * shows here as it arrives.
 */
export function TestPushForm({ app }: { app: Schemas["App"] }) {
  const [deviceId, setDeviceId] = useState("");
  const [title, setTitle] = useState("Test from Herald");
  const [body, setBody] = useState("If you can read this, push works.");
  const { busy, error, run } = useSubmit();
  const [sent, setSent] = useState<Campaign>();

  const id = deviceId.trim();
  const malformed = id !== "" && !UUID.test(id);

  const submit = () => {
    setSent(undefined);
    return run(async () => {
      const campaign = unwrap(
        await herald.POST("/v1/push/send-to-devices", {
          body: {
            app_id: app.id,
            name: `Test push to device ${id.toLowerCase()}`,
            device_ids: [id],
            contents: { en: { title, body } },
            data: { herald_test: "true" },
          },
        }),
      );
      setSent(campaign);
    });
  };

  return (
    <Card withBorder padding="md" component="section" aria-label="Send test push">
      <Title order={3} mb="xs">
        Send test push
      </Title>
      <Text size="sm" mb="sm">
        Sends to exactly this device, through the same pipeline as a campaign.
      </Text>
      <SubmitForm onSubmit={submit}>
        <Stack gap="sm" maw={520}>
          <TextInput
            label="Device id"
            description="The device's id from the Devices page or its registration answer."
            required
            value={deviceId}
            error={malformed ? "A device id is a UUID." : undefined}
            onChange={(e) => setDeviceId(e.currentTarget.value)}
          />
          <TextInput label="Title" value={title} onChange={(e) => setTitle(e.currentTarget.value)} />
          <TextInput label="Message" value={body} onChange={(e) => setBody(e.currentTarget.value)} />
          <FormError error={error} />
          {sent && <TestPushOutcome first={sent} />}
          <Group>
            <Button type="submit" loading={busy} disabled={id === "" || malformed}>
              Send test push
            </Button>
          </Group>
        </Stack>
      </SubmitForm>
    </Card>
  );
}

/** The test campaign as it goes: polled while it runs, then its final counts. */
function TestPushOutcome({ first }: { first: Campaign }) {
  const [running, setRunning] = useState(isRunning(first.status));
  const polled = useApi("/v1/campaigns/{id}", { params: { path: { id: first.id } } }, running ? 1000 : undefined);
  const c = polled.data ?? first;
  useEffect(() => setRunning(isRunning(c.status)), [c.status]);
  const done = c.status === "completed";

  return (
    <Stack gap={4} role="status" aria-live="polite">
      <Group gap="xs">
        <Text size="sm">
          Test campaign <Anchor {...linkProps(`/campaigns/${c.id}`)}>{c.name}</Anchor>
        </Text>
        <StatusBadge status={c.status} />
      </Group>
      {done && c.audience_size === 0 ? (
        <Text size="sm" c="orange.9">
          No device was sent to: this id is not a device of this app, or the device is opted out or its token is
          invalid.
        </Text>
      ) : (
        <Table withTableBorder fz="sm" maw={520} aria-label="Test push outcome">
          <Table.Thead>
            <Table.Tr>
              <Table.Th>Audience</Table.Th>
              <Table.Th>Sent</Table.Th>
              <Table.Th>Delivered</Table.Th>
              <Table.Th>Failed</Table.Th>
              <Table.Th>Bounced</Table.Th>
              <Table.Th>Throttled</Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            <Table.Tr>
              <Table.Td>{c.audience_size}</Table.Td>
              <Table.Td>{c.stats.sent}</Table.Td>
              <Table.Td>{c.stats.delivered}</Table.Td>
              <Table.Td>{c.stats.failed}</Table.Td>
              <Table.Td>{c.stats.bounced}</Table.Td>
              <Table.Td>{c.stats.throttled}</Table.Td>
            </Table.Tr>
          </Table.Tbody>
        </Table>
      )}
      {c.failure_reason && (
        <Text size="sm" c="red.8">
          {c.failure_reason}
        </Text>
      )}
    </Stack>
  );
}
