import { Anchor, Button, Group, Progress, Select, Table, Text } from "@mantine/core";
import { useEffect, useState } from "react";
import type { Schemas } from "@herald/client";
import { useApi } from "../api/use-api";
import { useSession } from "../auth/session-context";
import { ErrorAlert, Loading } from "../components/feedback";
import { NoApp } from "../components/no-app";
import { formatTime, PageHeader } from "../components/page-header";
import { Pager } from "../components/pager";
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
  const rows = list.data?.data ?? [];

  if (noApps) return <NoApp />;
  return (
    <>
      <PageHeader title="Campaigns">
        {canSend(me.role) && <Button onClick={() => navigate("/campaigns/new")}>New campaign</Button>}
      </PageHeader>
      <Group mb="md">
        <Select
          label="Status"
          data={[{ value: "", label: "All statuses" }, ...STATUSES.map((s) => ({ value: s, label: s }))]}
          value={status}
          onChange={(v) => setStatus((v ?? "") as CampaignStatus | "")}
          allowDeselect={false}
          w={200}
        />
      </Group>
      <ErrorAlert error={list.error} />
      {list.data === undefined ? (
        !list.error && <Loading />
      ) : rows.length === 0 ? (
        <Text role="status">{status ? `No ${status} campaigns.` : "No campaigns yet."}</Text>
      ) : (
        <Table.ScrollContainer minWidth={720}>
          <Table striped verticalSpacing="sm" aria-label="Campaigns">
            <Table.Thead>
              <Table.Tr>
                <Table.Th>Name</Table.Th>
                <Table.Th>Status</Table.Th>
                <Table.Th>Progress</Table.Th>
                <Table.Th>Scheduled</Table.Th>
                <Table.Th>Created</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {rows.map((c) => (
                <Table.Tr key={c.id}>
                  <Table.Td>
                    <Anchor {...linkProps(`/campaigns/${c.id}`)}>{c.name}</Anchor>
                  </Table.Td>
                  <Table.Td miw={120}>
                    <StatusBadge status={c.status} />
                  </Table.Td>
                  <Table.Td miw={160}>
                    <CampaignProgress campaign={c} />
                  </Table.Td>
                  <Table.Td>{formatTime(c.scheduled_at)}</Table.Td>
                  <Table.Td>{formatTime(c.created_at)}</Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        </Table.ScrollContainer>
      )}
      {list.data && <Pager page={page} perPage={PER_PAGE} total={list.data.total} onChange={setPage} />}
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
