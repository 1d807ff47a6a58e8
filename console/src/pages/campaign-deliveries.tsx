import { Badge, Button, Card, Group, Select, Table, Text, Title } from "@mantine/core";
import { useEffect, useRef, useState } from "react";
import { type operations, type Schemas, unwrap } from "@herald/client";
import { attachmentName, saveFile } from "../api/download";
import { herald } from "../api/herald";
import { useApi } from "../api/use-api";
import { ErrorAlert, Loading, notifyError } from "../components/feedback";
import { formatTime } from "../components/page-header";
import { Pager } from "../components/pager";
import { PLATFORM_LABELS, PLATFORM_OPTIONS, type Platform } from "./platforms";

type Delivery = Schemas["Delivery"];
type Outcome = Delivery["outcome"];
type ExportFormat = NonNullable<NonNullable<operations["exportCampaignDeliveries"]["parameters"]["query"]>["format"]>;

const PER_PAGE = 50;

const OUTCOME_COLORS: Record<Outcome, string> = {
  delivered: "green",
  failed: "red",
  bounced: "orange",
  throttled: "yellow",
};
const OUTCOME_OPTIONS = (Object.keys(OUTCOME_COLORS) as Outcome[]).map((value) => ({
  value,
  label: value[0]!.toUpperCase() + value.slice(1),
}));

/**
 * A campaign's per-device receipts: filtered by outcome and platform, paged by the API,
 * refreshed as the campaign's outcomes come in, and exported (CSV or NDJSON) with the same
 * filters through the API client, so the session's token (and its refresh) applies.
 */
export function CampaignDeliveries({ campaignId, recorded }: { campaignId: string; recorded: number }) {
  const [outcome, setOutcome] = useState<Outcome | "">("");
  const [platform, setPlatform] = useState<Platform | "">("");
  const [page, setPage] = useState(1);
  const [exporting, setExporting] = useState<ExportFormat | null>(null);
  const filters = { outcome: outcome || undefined, platform: platform || undefined };
  const filtering = outcome !== "" || platform !== "";

  const list = useApi("/v1/campaigns/{id}/deliveries", {
    params: { path: { id: campaignId }, query: { page, per_page: PER_PAGE, ...filters } },
  });

  // New outcomes (the campaign's `sent` counter, polled by the page) show up at once.
  const shownFor = useRef(recorded);
  useEffect(() => {
    if (shownFor.current === recorded) return;
    shownFor.current = recorded;
    list.reload();
  }, [recorded, list.reload]);

  // biome-ignore lint/correctness/useExhaustiveDependencies: other filters start at page 1
  useEffect(() => setPage(1), [outcome, platform]);

  async function download(format: ExportFormat) {
    setExporting(format);
    try {
      const answer = await herald.GET("/v1/campaigns/{id}/deliveries/export", {
        params: { path: { id: campaignId }, query: { format, ...filters } },
        parseAs: "blob",
      });
      const blob = unwrap(answer) as Blob;
      const name = attachmentName(answer.response.headers.get("content-disposition"));
      saveFile(blob, name ?? `campaign-${campaignId}-deliveries.${format}`);
    } catch (err) {
      // An interrupted download rejects here too: nothing incomplete is saved.
      notifyError(err, "The export failed");
    } finally {
      setExporting(null);
    }
  }

  const rows = list.data?.data ?? [];
  return (
    <Card withBorder component="section" aria-label="Deliveries">
      <Group justify="space-between" mb="sm" wrap="wrap" gap="sm">
        <Title order={3} size="h4">
          Deliveries
        </Title>
        <Group gap="xs">
          {(["csv", "ndjson"] as const).map((format) => (
            <Button
              key={format}
              size="xs"
              variant="default"
              loading={exporting === format}
              disabled={exporting !== null && exporting !== format}
              onClick={() => void download(format)}
            >
              Export {format === "csv" ? "CSV" : "NDJSON"}
            </Button>
          ))}
        </Group>
      </Group>
      <Group mb="sm" role="search" aria-label="Filter deliveries" grow>
        <Select
          label="Outcome"
          data={[{ value: "", label: "Any" }, ...OUTCOME_OPTIONS]}
          value={outcome}
          onChange={(v) => setOutcome((v ?? "") as Outcome | "")}
          allowDeselect={false}
        />
        <Select
          label="Platform"
          data={[{ value: "", label: "Any" }, ...PLATFORM_OPTIONS]}
          value={platform}
          onChange={(v) => setPlatform((v ?? "") as Platform | "")}
          allowDeselect={false}
        />
      </Group>
      <ErrorAlert error={list.error} title="Could not load the deliveries" />
      {list.data === undefined ? (
        !list.error && <Loading label="Loading the deliveries" />
      ) : rows.length === 0 ? (
        <Text size="sm" role="status">
          {filtering ? "No delivery matches these filters." : "No outcomes recorded yet."}
        </Text>
      ) : (
        <DeliveryTable deliveries={rows} />
      )}
      {list.data && <Pager page={page} perPage={PER_PAGE} total={list.data.total} onChange={setPage} />}
    </Card>
  );
}

function DeliveryTable({ deliveries }: { deliveries: Delivery[] }) {
  return (
    <Table.ScrollContainer minWidth={820}>
      <Table striped verticalSpacing="xs" aria-label="Deliveries">
        <Table.Thead>
          <Table.Tr>
            <Table.Th>Device id</Table.Th>
            <Table.Th>External id</Table.Th>
            <Table.Th>Platform</Table.Th>
            <Table.Th>Outcome</Table.Th>
            <Table.Th>Reason</Table.Th>
            <Table.Th>Attempts</Table.Th>
            <Table.Th>Time</Table.Th>
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {deliveries.map((d) => (
            <Table.Tr key={d.device_id}>
              <Table.Td>
                <Text ff="monospace" size="xs">
                  {d.device_id}
                </Text>
              </Table.Td>
              <Table.Td>{d.external_id ?? "—"}</Table.Td>
              <Table.Td>{d.platform ? PLATFORM_LABELS[d.platform] : "—"}</Table.Td>
              <Table.Td>
                <Badge variant="light" color={OUTCOME_COLORS[d.outcome]}>
                  {d.outcome}
                </Badge>
              </Table.Td>
              <Table.Td style={{ wordBreak: "break-word" }}>{d.reason ?? "—"}</Table.Td>
              <Table.Td>{d.attempts}</Table.Td>
              <Table.Td>{formatTime(d.at)}</Table.Td>
            </Table.Tr>
          ))}
        </Table.Tbody>
      </Table>
    </Table.ScrollContainer>
  );
}
