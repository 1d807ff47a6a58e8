import type { MessageInitShape } from "@bufbuild/protobuf";
import type { PageInfoSchema, PageRequest } from "@herald/proto/common";

const DEFAULT_PER_PAGE = 50;
const MAX_PER_PAGE = 200;

export interface Page {
  page: number;
  perPage: number;
  offset: number;
}

/** The gateway rejects out-of-range paging; clamp anyway, the store must never see it. */
export function pageOf(req: PageRequest | undefined): Page {
  const page = Math.max(1, req?.page || 1);
  const perPage = Math.min(MAX_PER_PAGE, Math.max(1, req?.perPage || DEFAULT_PER_PAGE));
  return { page, perPage, offset: (page - 1) * perPage };
}

export function pageInfo({ page, perPage }: Page, total: number): MessageInitShape<typeof PageInfoSchema> {
  return { page, perPage, total: BigInt(total) };
}
