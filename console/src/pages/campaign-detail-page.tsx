import { Anchor, Breadcrumbs, Card, Group, SimpleGrid, Stack, Table, Text, Title } from "@mantine/core";
import { lazy, Suspense, useEffect, useRef, useState } from "react";
import type { Schemas } from "@herald/client";
import { herald } from "../api/herald";
import { useApi } from "../api/use-api";
import { useSession } from "../auth/session-context";
import { ConfirmButton } from "../components/confirm";
import { ErrorAlert, Loading } from "../components/feedback";
import { formatTime } from "../components/page-header";
import { canSend } from "../roles";
import { linkProps } from "../routing";
import { CampaignDeliveries } from "./campaign-deliveries";
import { CampaignProgress } from "./campaigns-page";
import { isCancellable, isRunning, StatusBadge } from "./campaign-status";
import type { DeliveryPoint } from "./delivery-chart";
import { languageName } from "./composer-fields";

const DeliveryChart = lazy(() => import("./delivery-chart"));

type Campaign = Schemas["Campaign"];

/** Polls fast while delivery runs, slowly while scheduled, not at all once it has ended. */
const pollFor = (c: Campaign | undefined) =>
  !c ? 1_000 : isRunning(c.status) ? 1_000 : c.status === "scheduled" ? 5_000 : undefined;

export default function CampaignDetailPage({ id }: { id: string }) {
  const { me } = useSession();
  const [poll, setPoll] = useState<number | undefined>(1_000);
  const campaign = useApi("/v1/campaigns/{id}", { params: { path: { id } } }, poll);
  const points = useDeliverySeries(campaign.data);
  const c = campaign.data;

  useEffect(() => setPoll(pollFor(c)), [c]);

  if (campaign.error && !c) return <ErrorAlert error={campaign.error} title="Could not load the campaign" />;
  if (!c) return <Loading />;
  const s = c.stats;

  return (
    <Stack>
      <Breadcrumbs>
        <Anchor {...linkProps("/campaigns")}>Campaigns</Anchor>
        <Text>{c.name}</Text>
      </Breadcrumbs>
      <Group justify="space-between">
        <Group gap="sm">
          <Title order={2}>{c.name}</Title>
          <StatusBadge status={c.status} />
        </Group>
        {canSend(me.role) && isCancellable(c.status) && (
          <ConfirmButton
            label="Cancel campaign"
            title={`Cancel ${c.name}?`}
            size="sm"
            call={() => herald.POST("/v1/campaigns/{id}/cancel", { params: { path: { id: c.id } } })}
            success={"Campaign cancelled"}
            onDone={campaign.reload}
          >
            No device will receive it. This cannot be undone.
          </ConfirmButton>
        )}
      </Group>
      {c.failure_reason && <ErrorAlert error={new Error(c.failure_reason)} title="The campaign failed" />}
      <SimpleGrid cols={{ base: 2, sm: 4, lg: 8 }} aria-live="polite">
        <Stat label="Audience" value={c.audience_size} />
        <Stat label="Sent" value={s.sent} />
        <Stat label="Delivered" value={s.delivered} />
        <Stat label="Failed" value={s.failed} />
        <Stat label="Bounced" value={s.bounced} />
        <Stat label="Throttled" value={s.throttled} />
        <Stat label="Received" value={s.received} />
        <Stat label="Clicked" value={s.clicked} />
      </SimpleGrid>
      <CampaignProgress campaign={c} />
      <Card withBorder component="section" aria-label="Delivery over time">
        <Title order={3} size="h4" mb="sm">
          Delivery over time
        </Title>
        {points.length === 0 ? (
          <Text size="sm">
            {c.status === "scheduled" ? `Delivery starts ${formatTime(c.scheduled_at)}.` : "No deliveries."}
          </Text>
        ) : (
          <Suspense fallback={<Loading label="Loading the chart" />}>
            <DeliveryChart points={points} />
          </Suspense>
        )}
      </Card>
      {/* Receipts exist once delivery has started. */}
      {c.sent_at && <CampaignDeliveries campaignId={c.id} recorded={s.sent} />}
      <Card withBorder component="section" aria-label="Details">
        <Title order={3} size="h4" mb="sm">
          Details
        </Title>
        <Table variant="vertical" layout="fixed" withTableBorder>
          <Table.Tbody>
            <Row label="Audience">
              {c.target.type === "all"
                ? "All devices"
                : c.target.type === "users"
                  ? `${c.target.external_ids_count} external ids`
                  : c.target.type === "devices"
                    ? `Devices ${c.target.device_ids.join(", ")}`
                    : `Segment ${c.target.segment_id}`}
            </Row>
            <Row label="Scheduled">{formatTime(c.scheduled_at)}</Row>
            <Row label="Started">{formatTime(c.sent_at)}</Row>
            <Row label="Completed">{formatTime(c.completed_at)}</Row>
            <Row label="Priority">{c.priority}</Row>
            <Row label="Time to live">{c.ttl ? `${c.ttl} s` : "providers' default"}</Row>
            {c.android_channel_id && <Row label="Android channel">{c.android_channel_id}</Row>}
            {c.image_url && <Row label="Image">{c.image_url}</Row>}
            {c.data && <Row label="Data">{JSON.stringify(c.data)}</Row>}
            {Object.entries(c.contents).map(([lang, text]) => (
              <Row key={lang} label={`${languageName(lang)} (${lang})`}>
                <Text fw={600} size="sm">
                  {text.title}
                </Text>
                <Text size="sm">{text.body}</Text>
              </Row>
            ))}
          </Table.Tbody>
        </Table>
      </Card>
    </Stack>
  );
}

function Stat({ label, value }: { label: string; value: number }) {
  return (
    <Card withBorder padding="sm">
      <Text size="xs" c="dimmed" tt="uppercase" fw={700}>
        {label}
      </Text>
      <Text size="xl" fw={700} data-testid={`stat-${label.toLowerCase()}`}>
        {value.toLocaleString()}
      </Text>
    </Card>
  );
}

function Row({ label, children }: { label: string; children: React.ReactNode }) {
  return (
    <Table.Tr>
      <Table.Th w={160}>{label}</Table.Th>
      <Table.Td style={{ wordBreak: "break-word" }}>{children}</Table.Td>
    </Table.Tr>
  );
}

const timeLabel = (ms: number) => new Date(ms).toLocaleTimeString();

/**
 * The API gives counters, not a history: the series is the start (zero at sent_at), each
 * polled change while the page is open, and the end (the final counters at completed_at).
 */
function useDeliverySeries(c: Campaign | undefined): DeliveryPoint[] {
  const samples = useRef<{ at: number; point: DeliveryPoint }[]>([]);
  const [points, setPoints] = useState<DeliveryPoint[]>([]);
  useEffect(() => {
    if (!c?.sent_at) return;
    const s = c.stats;
    const point = (at: number, zero = false): DeliveryPoint => ({
      time: timeLabel(at),
      Delivered: zero ? 0 : s.delivered,
      Failed: zero ? 0 : s.failed,
      Bounced: zero ? 0 : s.bounced,
      Throttled: zero ? 0 : s.throttled,
    });
    const list = samples.current;
    const start = Date.parse(c.sent_at);
    if (list.length === 0) list.push({ at: start, point: point(start, true) });
    const at = c.completed_at ? Date.parse(c.completed_at) : Date.now();
    const last = list[list.length - 1]!;
    const next = point(at);
    const changed = (["Delivered", "Failed", "Bounced", "Throttled"] as const).some((k) => next[k] !== last.point[k]);
    if (changed && at >= last.at) list.push({ at, point: next });
    setPoints(list.map((x) => x.point));
  }, [c]);
  return points;
}
