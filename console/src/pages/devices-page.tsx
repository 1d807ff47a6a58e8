import { Badge, Button, Group, Select, SimpleGrid, Table, Text, TextInput } from "@mantine/core";
import { useDebouncedValue } from "@mantine/hooks";
import { useEffect, useState } from "react";
import type { Schemas } from "@herald/client";
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
import { filterParams, filtersActive, NO_FILTERS, type DeviceFilters } from "./device-filters";
import { PLATFORM_LABELS, PLATFORM_OPTIONS } from "./platforms";

const PER_PAGE = 50;
const YES_NO = [
  { value: "", label: "Any" },
  { value: "yes", label: "Yes" },
  { value: "no", label: "No" },
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

  const rows = list.data?.data ?? [];
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
        <Select
          label="Platform"
          data={[{ value: "", label: "Any" }, ...PLATFORM_OPTIONS]}
          value={filters.platform}
          onChange={(v) => set("platform", (v ?? "") as DeviceFilters["platform"])}
          allowDeselect={false}
        />
        <TextInput
          label="Language"
          placeholder="e.g. en"
          value={filters.language}
          onChange={(e) => set("language", e.currentTarget.value)}
        />
        <Select
          label="Opted in"
          data={YES_NO}
          value={filters.optedIn}
          onChange={(v) => set("optedIn", (v ?? "") as DeviceFilters["optedIn"])}
          allowDeselect={false}
        />
        <Select
          label="Invalid token"
          data={YES_NO}
          value={filters.invalid}
          onChange={(v) => set("invalid", (v ?? "") as DeviceFilters["invalid"])}
          allowDeselect={false}
        />
      </SimpleGrid>
      <ErrorAlert error={list.error} />
      {list.data === undefined ? (
        !list.error && <Loading />
      ) : rows.length === 0 ? (
        <Text role="status">{filtering ? "No device matches these filters." : "No devices registered yet."}</Text>
      ) : (
        <DeviceTable devices={rows} canChange={canSend(me.role)} onChanged={list.reload} />
      )}
      {list.data && <Pager page={page} perPage={PER_PAGE} total={list.data.total} onChange={setPage} />}
    </>
  );
}

function DeviceTable(props: { devices: Schemas["Device"][]; canChange: boolean; onChanged: () => void }) {
  return (
    <Table.ScrollContainer minWidth={820}>
      <Table striped verticalSpacing="xs" aria-label="Devices">
        <Table.Thead>
          <Table.Tr>
            <Table.Th>Device id</Table.Th>
            <Table.Th>External id</Table.Th>
            <Table.Th>Platform</Table.Th>
            <Table.Th>Language</Table.Th>
            <Table.Th>Status</Table.Th>
            <Table.Th>Registered</Table.Th>
            <Table.Th aria-label="Actions" />
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {props.devices.map((d) => (
            <Table.Tr key={d.id}>
              <Table.Td>
                <Text ff="monospace" size="xs">
                  {d.id}
                </Text>
              </Table.Td>
              <Table.Td>{d.external_id ?? "—"}</Table.Td>
              <Table.Td>{PLATFORM_LABELS[d.platform]}</Table.Td>
              <Table.Td>{d.language ?? "—"}</Table.Td>
              <Table.Td>
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
              </Table.Td>
              <Table.Td>{formatTime(d.created_at)}</Table.Td>
              <Table.Td>
                {props.canChange && (
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
                      onConfirm={() =>
                        attempt(
                          () => herald.DELETE("/v1/devices/{id}", { params: { path: { id: d.id } } }),
                          "Device deleted",
                        ).then(props.onChanged)
                      }
                    >
                      The registration is removed; the device registers again when its app next starts.
                    </ConfirmButton>
                  </Group>
                )}
              </Table.Td>
            </Table.Tr>
          ))}
        </Table.Tbody>
      </Table>
    </Table.ScrollContainer>
  );
}
