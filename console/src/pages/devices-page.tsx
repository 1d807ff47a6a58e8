import { Badge, Button, Group, SimpleGrid, Text, TextInput } from "@mantine/core";
import { useDebouncedValue } from "@mantine/hooks";
import { useEffect, useState } from "react";
import type { Schemas } from "@herald/client";
import { herald } from "../api/herald";
import { useApi } from "../api/use-api";
import { useSession } from "../auth/session-context";
import { ConfirmButton } from "../components/confirm";
import { ApiList } from "../components/api-list";
import { DataTable } from "../components/data-table";
import { attempt } from "../components/feedback";
import { FilterSelect } from "../components/filter-select";
import { NoApp } from "../components/no-app";
import { formatTime, PageHeader } from "../components/page-header";
import { useRequiredApp } from "../layout/app-picker";
import { canSend } from "../roles";
import { filterParams, filtersActive, NO_FILTERS, type DeviceFilters } from "./device-filters";
import { PLATFORM_LABELS, PLATFORM_OPTIONS } from "./platforms";

const PER_PAGE = 50;
const YES_NO = [
  { value: "yes" as const, label: "Yes" },
  { value: "no" as const, label: "No" },
];

export function DevicesPage() {
  const { me } = useSession();
  const { app, noApps } = useRequiredApp();
  const [filters, setFilters] = useState<DeviceFilters>(NO_FILTERS);
  const [debounced] = useDebouncedValue(filters, 250);
  const [page, setPage] = useState(1);
  const filtering = filtersActive(debounced);

  // The API filters, pages and counts; the console only passes the filters on.
  const list = useApi(
    "/v1/devices",
    app ? { params: { query: { app_id: app.id, page, per_page: PER_PAGE, ...filterParams(debounced) } } } : null,
  );

  // biome-ignore lint/correctness/useExhaustiveDependencies: other filters or another app start at page 1
  useEffect(() => setPage(1), [debounced, app]);

  const set = <K extends keyof DeviceFilters>(k: K, v: DeviceFilters[K]) => setFilters((f) => ({ ...f, [k]: v }));

  if (noApps) return <NoApp />;
  return (
    <>
      <PageHeader title="Devices">
        {filtersActive(filters) && (
          <Button variant="default" onClick={() => setFilters(NO_FILTERS)}>
            Clear filters
          </Button>
        )}
      </PageHeader>
      <SimpleGrid cols={{ base: 1, xs: 2, md: 5 }} mb="md" role="search" aria-label="Filter devices">
        <TextInput
          label="External id"
          placeholder="Exact id"
          type="search"
          value={filters.externalId}
          onChange={(e) => set("externalId", e.currentTarget.value)}
        />
        <FilterSelect
          label="Platform"
          options={PLATFORM_OPTIONS}
          value={filters.platform}
          onChange={(v) => set("platform", v)}
        />
        <TextInput
          label="Language"
          placeholder="e.g. en"
          value={filters.language}
          onChange={(e) => set("language", e.currentTarget.value)}
        />
        <FilterSelect label="Opted in" options={YES_NO} value={filters.optedIn} onChange={(v) => set("optedIn", v)} />
        <FilterSelect
          label="Invalid token"
          options={YES_NO}
          value={filters.invalid}
          onChange={(v) => set("invalid", v)}
        />
      </SimpleGrid>
      <ApiList
        list={list}
        empty={filtering ? "No device matches these filters." : "No devices registered yet."}
        paging={{ page, perPage: PER_PAGE, onChange: setPage }}
      >
        {(rows) => <DeviceTable devices={rows} canChange={canSend(me.role)} onChanged={list.reload} />}
      </ApiList>
    </>
  );
}

function DeviceTable(props: { devices: Schemas["Device"][]; canChange: boolean; onChanged: () => void }) {
  return (
    <DataTable
      label="Devices"
      minWidth={820}
      spacing="xs"
      rows={props.devices}
      rowKey={(d) => d.id}
      columns={[
        {
          header: "Device id",
          cell: (d) => (
            <Text ff="monospace" size="xs">
              {d.id}
            </Text>
          ),
        },
        { header: "External id", cell: (d) => d.external_id ?? "—" },
        { header: "Platform", cell: (d) => PLATFORM_LABELS[d.platform] },
        { header: "Language", cell: (d) => d.language ?? "—" },
        {
          header: "Status",
          cell: (d) => (
            <Group gap={4}>
              <Badge variant="light" color={d.opted_in ? "green" : "gray"}>
                {d.opted_in ? "Opted in" : "Opted out"}
              </Badge>
              {d.invalid && (
                <Badge variant="light" color="red">
                  Invalid
                </Badge>
              )}
            </Group>
          ),
        },
        { header: "Registered", cell: (d) => formatTime(d.created_at) },
        {
          header: "Actions",
          hidden: true,
          cell: (d) =>
            props.canChange && (
              <Group gap="xs" wrap="nowrap" justify="flex-end">
                <Button
                  size="xs"
                  variant="default"
                  aria-label={`${d.opted_in ? "Opt out" : "Opt in"} device ${d.external_id ?? d.id}`}
                  onClick={() =>
                    void attempt(
                      () =>
                        herald.POST(d.opted_in ? "/v1/devices/{id}/opt-out" : "/v1/devices/{id}/opt-in", {
                          params: { path: { id: d.id } },
                        }),
                      d.opted_in ? "Device opted out" : "Device opted in",
                    ).then(props.onChanged)
                  }
                >
                  {d.opted_in ? "Opt out" : "Opt in"}
                </Button>
                <ConfirmButton
                  label="Delete"
                  ariaLabel={`Delete device ${d.external_id ?? d.id}`}
                  title="Delete this device?"
                  confirmLabel="Delete device"
                  call={() => herald.DELETE("/v1/devices/{id}", { params: { path: { id: d.id } } })}
                  success={"Device deleted"}
                  onDone={props.onChanged}
                >
                  The registration is removed; the device registers again when its app next starts.
                </ConfirmButton>
              </Group>
            ),
        },
      ]}
    />
  );
}
