import { Button, Text } from "@mantine/core";
import { useState } from "react";
import { herald } from "../api/herald";
import { useApi } from "../api/use-api";
import { useSession } from "../auth/session-context";
import { ConfirmButton } from "../components/confirm";
import { ApiList } from "../components/api-list";
import { DataTable } from "../components/data-table";
import { NoApp } from "../components/no-app";
import { formatTime, PageHeader } from "../components/page-header";
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
      <ApiList
        list={segments}
        empty={`No segments for ${app?.name} yet.`}
        paging={{ page, perPage: PER_PAGE, onChange: setPage }}
      >
        {(rows) => (
          <DataTable
            minWidth={600}
            rows={rows}
            rowKey={(s) => s.id}
            columns={[
              { header: "Name", cell: (s) => s.name },
              { header: "Rule", cell: (s) => <Text size="sm">{describeRule(s.rule)}</Text> },
              { header: "Created", cell: (s) => formatTime(s.created_at) },
              {
                header: "Actions",
                hidden: true,
                cell: (s) =>
                  change && (
                    <ConfirmButton
                      label="Delete"
                      ariaLabel={`Delete segment ${s.name}`}
                      title={`Delete ${s.name}?`}
                      confirmLabel="Delete segment"
                      call={() => herald.DELETE("/v1/segments/{id}", { params: { path: { id: s.id } } })}
                      success={`${s.name} deleted`}
                      onDone={segments.reload}
                    >
                      Scheduled campaigns that target it will fail when their time comes.
                    </ConfirmButton>
                  ),
              },
            ]}
          />
        )}
      </ApiList>
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
