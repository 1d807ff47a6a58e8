import { invalidArgument } from "./errors.js";

/**
 * The one paging rule of every list, REST and RPC alike: `page` counts from 1 (at most
 * 1,000,000), `per_page` is 1 to 200 and defaults to 50; anything else is refused (400
 * ValidationError), never clamped. The gateway's query schemas (gateway/src/schemas/common.ts
 * `pageQuery`) and the services (`pageOf`) both read these numbers.
 */
export const PAGING = { defaultPerPage: 50, maxPerPage: 200, maxPage: 1_000_000 } as const;

export interface Page {
  page: number;
  perPage: number;
  /** Rows to skip: (page - 1) × perPage. */
  offset: number;
}

/**
 * A list request's paging, checked. Unset fields (0 in proto3) take the defaults: page 1,
 * per_page 50. Out of range: INVALID_ARGUMENT naming the field.
 */
export function pageOf(req: { page?: number; perPage?: number } | undefined): Page {
  const page = req?.page || 1;
  const perPage = req?.perPage || PAGING.defaultPerPage;
  if (!Number.isInteger(page) || page < 1 || page > PAGING.maxPage) {
    throw invalidArgument(`page must be between 1 and ${PAGING.maxPage}`);
  }
  if (!Number.isInteger(perPage) || perPage < 1 || perPage > PAGING.maxPerPage) {
    throw invalidArgument(`per_page must be between 1 and ${PAGING.maxPerPage}`);
  }
  return { page, perPage, offset: (page - 1) * perPage };
}
