import { Badge, Button, Card, Group, Text, Title } from "@mantine/core";
import { useEffect, useRef, useState } from "react";
import { type operations, type Schemas, unwrap } from "@herald/client";
import { attachmentName, saveFile } from "../api/download";
import { herald } from "../api/herald";
import { useApi } from "../api/use-api";
import { ApiList } from "../components/api-list";
import { DataTable } from "../components/data-table";
import { notifyError } from "../components/feedback";
import { FilterSelect } from "../components/filter-select";
import { formatTime } from "../components/page-header";
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
        <FilterSelect label="Outcome" options={OUTCOME_OPTIONS} value={outcome} onChange={setOutcome} />
        <FilterSelect label="Platform" options={PLATFORM_OPTIONS} value={platform} onChange={setPlatform} />
      </Group>
      <ApiList
        list={list}
        empty={filtering ? "No delivery matches these filters." : "No outcomes recorded yet."}
        size="sm"
        errorTitle="Could not load the deliveries"
        loadingLabel="Loading the deliveries"
        paging={{ page, perPage: PER_PAGE, onChange: setPage }}
      >
        {(rows) => (
          <DataTable<Delivery>
            label="Deliveries"
            minWidth={820}
            spacing="xs"
            rows={rows}
            rowKey={(d) => d.device_id}
            columns={[
              {
                header: "Device id",
                cell: (d) => (
                  <Text ff="monospace" size="xs">
                    {d.device_id}
                  </Text>
                ),
              },
              { header: "External id", cell: (d) => d.external_id ?? "—" },
              { header: "Platform", cell: (d) => (d.platform ? PLATFORM_LABELS[d.platform] : "—") },
              {
                header: "Outcome",
                cell: (d) => (
                  <Badge variant="light" color={OUTCOME_COLORS[d.outcome]}>
                    {d.outcome}
                  </Badge>
                ),
              },
              { header: "Reason", td: { style: { wordBreak: "break-word" } }, cell: (d) => d.reason ?? "—" },
              { header: "Attempts", cell: (d) => d.attempts },
              { header: "Time", cell: (d) => formatTime(d.at) },
            ]}
          />
        )}
      </ApiList>
    </Card>
  );
}
