import { Text } from "@mantine/core";
import type { ReactNode } from "react";
import type { Resource } from "../api/use-api";
import { ErrorAlert, Loading } from "./feedback";
import { Pager } from "./pager";

interface ApiListProps<T> {
  /** A list the API answered (useApi): its items in `data`, their number across all pages in `total`. */
  list: Resource<{ data: T[]; total: number }>;
  /** What an empty answer says. */
  empty: ReactNode;
  /** The page shown and the page size asked for: a pager under the items. */
  paging?: { page: number; perPage: number; onChange: (page: number) => void };
  errorTitle?: string;
  loadingLabel?: string;
  size?: "sm";
  /** The items, when there are any. */
  children: (items: T[]) => ReactNode;
}

/**
 * A list of the API as every list page shows it: the error of the last load, a loader
 * until the first answer, what an empty answer says, else the items, and the pager.
 */
export function ApiList<T>({ list, empty, paging, errorTitle, loadingLabel, size, children }: ApiListProps<T>) {
  return (
    <>
      <ErrorAlert error={list.error} title={errorTitle} />
      {list.data === undefined ? (
        !list.error && <Loading label={loadingLabel} />
      ) : list.data.data.length === 0 ? (
        <Text role="status" size={size}>
          {empty}
        </Text>
      ) : (
        children(list.data.data)
      )}
      {list.data && paging && (
        <Pager page={paging.page} perPage={paging.perPage} total={list.data.total} onChange={paging.onChange} />
      )}
    </>
  );
}
