import { Button, Table, Text } from "@mantine/core";
import { useState } from "react";
import { herald } from "../api/herald";
import { useApi } from "../api/use-api";
import { useSession } from "../auth/session-context";
import { ConfirmButton } from "../components/confirm";
import { attempt, ErrorAlert, Loading } from "../components/feedback";
import { NoApp } from "../components/no-app";
import { formatTime, PageHeader } from "../components/page-header";
import { Pager } from "../components/pager";
import { useRequiredApp } from "../layout/app-picker";
import { canSend } from "../roles";
import { SegmentBuilder } from "./segment-builder";
import { describeRule } from "./segment-rule";

const PER_PAGE = 50;

export function SegmentsPage() {
  const { me } = useSession();
  const { app, noApps } = useRequiredApp();
  const [page, setPage] = useState(1);
  const [building, setBuilding] = useState(false);
  const segments = useApi(
    "/v1/segments",
    app ? { params: { query: { app_id: app.id, page, per_page: PER_PAGE } } } : null,
  );
  const change = canSend(me.role);

  if (noApps) return <NoApp />;
  return (
    <>
      <PageHeader title="Segments">
        {change && app && <Button onClick={() => setBuilding(true)}>New segment</Button>}
      </PageHeader>
      <ErrorAlert error={segments.error} />
      {!segments.data ? (
        <Loading />
      ) : segments.data.data.length === 0 ? (
        <Text>No segments for {app?.name} yet.</Text>
      ) : (
        <Table.ScrollContainer minWidth={600}>
          <Table striped verticalSpacing="sm">
            <Table.Thead>
              <Table.Tr>
                <Table.Th>Name</Table.Th>
                <Table.Th>Rule</Table.Th>
                <Table.Th>Created</Table.Th>
                <Table.Th aria-label="Actions" />
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {segments.data.data.map((s) => (
                <Table.Tr key={s.id}>
                  <Table.Td>{s.name}</Table.Td>
                  <Table.Td>
                    <Text size="sm">{describeRule(s.rule)}</Text>
                  </Table.Td>
                  <Table.Td>{formatTime(s.created_at)}</Table.Td>
                  <Table.Td>
                    {change && (
                      <ConfirmButton
                        label="Delete"
                        ariaLabel={`Delete segment ${s.name}`}
                        title={`Delete ${s.name}?`}
                        confirmLabel="Delete segment"
                        onConfirm={() =>
                          attempt(
                            () => herald.DELETE("/v1/segments/{id}", { params: { path: { id: s.id } } }),
                            `${s.name} deleted`,
                          ).then(segments.reload)
                        }
                      >
                        Scheduled campaigns that target it will fail when their time comes.
                      </ConfirmButton>
                    )}
                  </Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        </Table.ScrollContainer>
      )}
      {segments.data && <Pager page={page} perPage={PER_PAGE} total={segments.data.total} onChange={setPage} />}
      {building && app && (
        <SegmentBuilder
          app={app}
          onClose={() => setBuilding(false)}
          onSaved={() => {
            setBuilding(false);
            segments.reload();
          }}
        />
      )}
    </>
  );
}
