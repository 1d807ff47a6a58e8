import { Anchor, Badge, Breadcrumbs, Button, Card, Group, SimpleGrid, Stack, Text, Title } from "@mantine/core";
import { useApi } from "../api/use-api";
import { useSession } from "../auth/session-context";
import { ErrorAlert, Loading } from "../components/feedback";
import { formatTime } from "../components/page-header";
import { useAppOfPage } from "../layout/current-app";
import { canManageApps, canSend } from "../roles";
import { linkProps } from "../routing";
import { ApnsForm, FcmForm, VapidForm } from "./credential-forms";
import { PLATFORM_LABELS } from "./platforms";
import { TestPushForm } from "./test-push-form";

/** One app: its platform credentials (public parts and fingerprints only) and a test push. */
export function AppDetailPage({ id }: { id: string }) {
  const { me } = useSession();
  const app = useAppOfPage(id);
  const configs = useApi("/v1/apps/{app_id}/platform-config", { params: { path: { app_id: id } } });
  const manage = canManageApps(me.role);

  if (app.error) return <ErrorAlert error={app.error} title="Could not load the app" />;
  if (!app.data) return <Loading />;
  const c = configs.data;

  return (
    <Stack>
      <Breadcrumbs>
        <Anchor {...linkProps("/apps")}>Apps</Anchor>
        <Text>{app.data.name}</Text>
      </Breadcrumbs>
      <Group justify="space-between">
        <Title order={2}>{app.data.name}</Title>
        <Text c="dimmed" size="sm">
          {PLATFORM_LABELS[app.data.platform]} ·{" "}
          <Text span ff="monospace">
            {app.data.bundle_id}
          </Text>
        </Text>
      </Group>
      <ErrorAlert error={configs.error} title="Could not load the platform credentials" />
      <Title order={3}>Platform credentials</Title>
      {!manage && <Text size="sm">Your role can view credentials; an admin changes them.</Text>}
      <SimpleGrid cols={{ base: 1, md: 3 }}>
        <CredentialCard title="APNs (iOS)" configured={c?.ios ? c.ios.fingerprint : undefined}>
          {c?.ios && (
            <Facts
              rows={[
                ["Key id", c.ios.apns_key_id],
                ["Team id", c.ios.apns_team_id],
                ["Topic", c.ios.apns_topic ?? app.data.bundle_id],
                ["Environment", c.ios.apns_environment],
                ["Stored", formatTime(c.ios.updated_at)],
              ]}
            />
          )}
          {manage && <ApnsForm app={app.data} current={c?.ios ?? null} onSaved={configs.reload} />}
        </CredentialCard>
        <CredentialCard title="FCM (Android)" configured={c?.android ? c.android.fingerprint : undefined}>
          {c?.android && (
            <Facts
              rows={[
                ["Project", c.android.project_id],
                ["Service account", c.android.client_email],
                ["Stored", formatTime(c.android.updated_at)],
              ]}
            />
          )}
          {manage && <FcmForm app={app.data} onSaved={configs.reload} />}
        </CredentialCard>
        <CredentialCard title="Web Push (VAPID)" configured={c?.web ? c.web.fingerprint : undefined}>
          {c?.web && (
            <Facts
              rows={[
                ["Public key", c.web.vapid_public_key],
                ["Subject", c.web.vapid_subject],
                ["Stored", formatTime(c.web.updated_at)],
              ]}
            />
          )}
          {manage && <VapidForm app={app.data} current={c?.web ?? null} onSaved={configs.reload} />}
        </CredentialCard>
      </SimpleGrid>
      <Card withBorder padding="md" component="section" aria-label="Android notification channels">
        <Group justify="space-between" gap="sm">
          <Stack gap={4} maw={640}>
            <Title order={3} size="h4">
              Android notification channels
            </Title>
            <Text size="sm">
              The channels Android devices of this app create when they sync; a campaign can name one.
            </Text>
          </Stack>
          <Button component="a" variant="default" {...linkProps(`/apps/${app.data.id}/android-channels`)}>
            Android channels
          </Button>
        </Group>
      </Card>
      {canSend(me.role) && <TestPushForm app={app.data} />}
    </Stack>
  );
}

function CredentialCard(props: { title: string; configured: string | undefined; children: React.ReactNode }) {
  return (
    <Card withBorder padding="md" component="section" aria-label={props.title}>
      <Group justify="space-between" mb="xs">
        <Title order={4}>{props.title}</Title>
        <Badge color={props.configured ? "green" : "gray"} variant="light">
          {props.configured ? "Configured" : "Not configured"}
        </Badge>
      </Group>
      {props.configured && (
        <Text size="sm" mb="xs">
          Fingerprint{" "}
          <Text span ff="monospace" data-testid="fingerprint">
            {props.configured}
          </Text>
        </Text>
      )}
      <Stack gap="sm">{props.children}</Stack>
    </Card>
  );
}

function Facts({ rows }: { rows: [string, string][] }) {
  return (
    <Stack gap={2}>
      {rows.map(([k, v]) => (
        <Text size="sm" key={k} style={{ wordBreak: "break-all" }}>
          <Text span c="dimmed" size="sm">
            {k}:{" "}
          </Text>
          {v}
        </Text>
      ))}
    </Stack>
  );
}
