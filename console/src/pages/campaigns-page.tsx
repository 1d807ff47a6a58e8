import { Anchor, Button, Group, Progress, Text } from "@mantine/core";
import { useEffect, useState } from "react";
import type { Schemas } from "@herald/client";
import { useApi } from "../api/use-api";
import { useSession } from "../auth/session-context";
import { ApiList } from "../components/api-list";
import { DataTable } from "../components/data-table";
import { FilterSelect } from "../components/filter-select";
import { NoApp } from "../components/no-app";
import { formatTime, PageHeader } from "../components/page-header";
import { useRequiredApp } from "../layout/app-picker";
import { canSend } from "../roles";
import { linkProps, navigate } from "../routing";
import { type CampaignStatus, isRunning, STATUSES, StatusBadge } from "./campaign-status";

const PER_PAGE = 20;

export function CampaignsPage() {
  const { me } = useSession();
  const { app, noApps } = useRequiredApp();
  const [page, setPage] = useState(1);
  const [status, setStatus] = useState<CampaignStatus | "">("");
  // The API filters by status and counts; the list polls while campaigns progress.
  const list = useApi(
    "/v1/campaigns",
    app ? { params: { query: { app_id: app.id, status: status || undefined, page, per_page: PER_PAGE } } } : null,
    5_000,
  );

  // biome-ignore lint/correctness/useExhaustiveDependencies: another status or app starts at page 1
  useEffect(() => setPage(1), [status, app]);

  if (noApps) return <NoApp />;
  return (
    <>
      <PageHeader title="Campaigns">
        {canSend(me.role) && <Button onClick={() => navigate("/campaigns/new")}>New campaign</Button>}
      </PageHeader>
      <Group mb="md">
        <FilterSelect
          label="Status"
          anyLabel="All statuses"
          options={STATUSES.map((s) => ({ value: s, label: s }))}
          value={status}
          onChange={setStatus}
          w={200}
        />
      </Group>
      <ApiList
        list={list}
        empty={status ? `No ${status} campaigns.` : "No campaigns yet."}
        paging={{ page, perPage: PER_PAGE, onChange: setPage }}
      >
        {(rows) => (
          <DataTable
            label="Campaigns"
            minWidth={720}
            rows={rows}
            rowKey={(c) => c.id}
            columns={[
              { header: "Name", cell: (c) => <Anchor {...linkProps(`/campaigns/${c.id}`)}>{c.name}</Anchor> },
              { header: "Status", td: { miw: 120 }, cell: (c) => <StatusBadge status={c.status} /> },
              { header: "Progress", td: { miw: 160 }, cell: (c) => <CampaignProgress campaign={c} /> },
              { header: "Scheduled", cell: (c) => formatTime(c.scheduled_at) },
              { header: "Created", cell: (c) => formatTime(c.created_at) },
            ]}
          />
        )}
      </ApiList>
    </>
  );
}

/** Outcomes so far over the audience. */
export function CampaignProgress({ campaign }: { campaign: Schemas["Campaign"] }) {
  const s = campaign.stats;
  const done = s.delivered + s.failed + s.bounced + s.throttled;
  const of = campaign.audience_size;
  const pct = of > 0 ? Math.round((done / of) * 100) : campaign.status === "completed" ? 100 : 0;
  return (
    <Group gap="xs" wrap="nowrap">
      <Progress
        value={pct}
        w={90}
        animated={isRunning(campaign.status)}
        aria-label={`${campaign.name}: ${pct}% delivered`}
      />
      <Text size="xs">
        {done.toLocaleString()}/{of.toLocaleString()}
      </Text>
    </Group>
  );
}
