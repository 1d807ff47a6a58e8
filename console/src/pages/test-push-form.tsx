import { Anchor, Button, Card, Group, Stack, Text, TextInput, Title } from "@mantine/core";
import { useState } from "react";
import { api, errorMessage } from "../api/client";
import type { App, Campaign, Device } from "../api/types";
import { linkProps } from "../routing";

/**
 * "Send test push" to one device. The API targets devices by external id (send-to-users)
 * and has no per-device target, so the device is looked up and its external id is sent
 * to: every device registered with that external id receives the test.
 */
export function TestPushForm({ app }: { app: App }) {
  const [deviceId, setDeviceId] = useState("");
  const [title, setTitle] = useState("Test from Herald");
  const [body, setBody] = useState("If you can read this, push works.");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string>();
  const [sent, setSent] = useState<Campaign>();

  const submit = async () => {
    setBusy(true);
    setError(undefined);
    setSent(undefined);
    try {
      const device = await api<Device>("GET", `/v1/devices/${encodeURIComponent(deviceId.trim())}`);
      if (device.app_id !== app.id) throw new Error("That device belongs to another app.");
      if (!device.external_id) {
        throw new Error("This device has no external id; set one (PUT /v1/devices/{id}) to send it a test push.");
      }
      const campaign = await api<Campaign>("POST", "/v1/push/send-to-users", {
        app_id: app.id,
        name: `Test push to device ${device.id}`,
        external_ids: [device.external_id],
        contents: { en: { title, body } },
        data: { herald_test: "true" },
      });
      setSent(campaign);
    } catch (err) {
      setError(errorMessage(err));
    } finally {
      setBusy(false);
    }
  };

  return (
    <Card withBorder padding="md" component="section" aria-label="Send test push">
      <Title order={3} mb="xs">
        Send test push
      </Title>
      <Text size="sm" mb="sm">
        Sends to the device's external id, so every device of that user receives it.
      </Text>
      <form
        noValidate
        onSubmit={(e) => {
          e.preventDefault();
          void submit();
        }}
      >
        <Stack gap="sm" maw={520}>
          <TextInput label="Device id" required value={deviceId} onChange={(e) => setDeviceId(e.currentTarget.value)} />
          <TextInput label="Title" value={title} onChange={(e) => setTitle(e.currentTarget.value)} />
          <TextInput label="Message" value={body} onChange={(e) => setBody(e.currentTarget.value)} />
          {error && (
            <Text role="alert" c="red.8" size="sm">
              {error}
            </Text>
          )}
          {sent && (
            <Text role="status" size="sm">
              Sent. Follow it in <Anchor {...linkProps(`/campaigns/${sent.id}`)}>{sent.name}</Anchor>.
            </Text>
          )}
          <Group>
            <Button type="submit" loading={busy} disabled={!deviceId.trim()}>
              Send test push
            </Button>
          </Group>
        </Stack>
      </form>
    </Card>
  );
}
