import { Group, Pagination, Text } from "@mantine/core";

/** Page controls under a list: the API's page envelope (page, per_page, total). */
export function Pager(props: { page: number; perPage: number; total: number; onChange: (page: number) => void }) {
  const pages = Math.max(1, Math.ceil(props.total / props.perPage));
  return (
    <Group justify="space-between" mt="sm">
      <Text size="sm">{props.total} in total</Text>
      {pages > 1 && (
        <Pagination
          total={pages}
          value={props.page}
          onChange={props.onChange}
          size="sm"
          getControlProps={(control) => ({ "aria-label": `${control} page` })}
          getItemProps={(page) => ({ "aria-label": `Page ${page}` })}
        />
      )}
    </Group>
  );
}
