import { Anchor, Button, Group, Progress, Select, Table, Text } from "@mantine/core";
import { useEffect, useMemo, useState } from "react";
import { api, query } from "../api/client";
import type { Campaign, CampaignStatus, Page } from "../api/types";
import { useApi } from "../api/use-api";
import { useSession } from "../auth/session-context";
import { ErrorAlert, Loading } from "../components/feedback";
import { NoApp } from "../components/no-app";
import { formatTime, PageHeader } from "../components/page-header";
import { Pager } from "../components/pager";
import { useRequiredApp } from "../layout/app-picker";
import { canSend } from "../roles";
import { linkProps, navigate } from "../routing";
import { isRunning, STATUSES, StatusBadge } from "./campaign-status";

const PER_PAGE = 20;
/** GET /v1/campaigns has no status parameter: a status filter looks at this many of the newest. */
const FILTER_SCAN = 1_000;

export function CampaignsPage() {
  const { me } = useSession();
  const { app, noApps } = useRequiredApp();
  const [page, setPage] = useState(1);
  const [status, setStatus] = useState<CampaignStatus | "">("");
  const list = useApi<Page<Campaign>>(
    app && !status ? `/v1/campaigns${query({ app_id: app.id, page, per_page: PER_PAGE })}` : null,
    5_000,
  );
  const [scanned, setScanned] = useState<{ campaigns: Campaign[]; error?: unknown }>();

  // A status filter re-reads the newest campaigns every few seconds, as the list polls.
  useEffect(() => {
    if (!app || !status) return setScanned(undefined);
    let stop = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const scan = async () => {
      const all: Campaign[] = [];
      for (let p = 1; all.length < FILTER_SCAN; p++) {
        const res = await api<Page<Campaign>>(
          "GET",
          `/v1/campaigns${query({ app_id: app.id, page: p, per_page: 200 })}`,
        );
        all.push(...res.data);
        if (res.data.length < 200) break;
      }
      return all;
    };
    const round = () =>
      scan()
        .then(
          (campaigns) => !stop && setScanned({ campaigns }),
          (error: unknown) => !stop && setScanned({ campaigns: [], error }),
        )
        .finally(() => {
          if (!stop) timer = setTimeout(round, 5_000);
        });
    void round();
    return () => {
      stop = true;
      clearTimeout(timer);
    };
  }, [app, status]);

  // biome-ignore lint/correctness/useExhaustiveDependencies: another status or app starts at page 1
  useEffect(() => setPage(1), [status, app]);
  const filtered = useMemo(() => scanned?.campaigns.filter((c) => c.status === status) ?? [], [scanned, status]);
  const rows = status ? filtered.slice((page - 1) * PER_PAGE, page * PER_PAGE) : (list.data?.data ?? []);
  const total = status ? filtered.length : (list.data?.total ?? 0);
  const ready = status ? scanned !== undefined : list.data !== undefined;

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
      <ErrorAlert error={status ? scanned?.error : list.error} />
      {!ready ? (
        <Loading />
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
      {ready && <Pager page={page} perPage={PER_PAGE} total={total} onChange={setPage} />}
    </>
  );
}

/** Outcomes so far over the audience. */
export function CampaignProgress({ campaign }: { campaign: Campaign }) {
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
