import { Table, type TableTdProps } from "@mantine/core";
import type { Key, ReactNode } from "react";

/** One column of a DataTable: its header and what each row shows in it. */
export interface Column<T> {
  header: string;
  /** The header is an accessible name only (a column of buttons). */
  hidden?: boolean;
  cell: (row: T) => ReactNode;
  /** Props of the column's cells (a minimum width, word breaking). */
  td?: TableTdProps;
}

interface DataTableProps<T> {
  /** The table's accessible name. */
  label?: string;
  /** Below this width the table scrolls sideways inside its container, never the page. */
  minWidth: number;
  spacing?: "xs" | "sm";
  highlightOnHover?: boolean;
  rows: T[];
  rowKey: (row: T) => Key;
  columns: Column<T>[];
}

/** The console's one list table: striped, a header row, a row per item. */
export function DataTable<T>({
  label,
  minWidth,
  spacing = "sm",
  highlightOnHover,
  rows,
  rowKey,
  columns,
}: DataTableProps<T>) {
  return (
    <Table.ScrollContainer minWidth={minWidth}>
      <Table striped highlightOnHover={highlightOnHover} verticalSpacing={spacing} aria-label={label}>
        <Table.Thead>
          <Table.Tr>
            {columns.map((c) =>
              c.hidden ? (
                <Table.Th key={c.header} aria-label={c.header} />
              ) : (
                <Table.Th key={c.header}>{c.header}</Table.Th>
              ),
            )}
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {rows.map((row) => (
            <Table.Tr key={rowKey(row)}>
              {columns.map((c) => (
                <Table.Td key={c.header} {...c.td}>
                  {c.cell(row)}
                </Table.Td>
              ))}
            </Table.Tr>
          ))}
        </Table.Tbody>
      </Table>
    </Table.ScrollContainer>
  );
}
