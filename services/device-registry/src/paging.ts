import type { MessageInitShape } from "@bufbuild/protobuf";
import type { PageInfoSchema } from "@herald/proto/common";
import type { Page } from "@herald/runtime";

/** The one paging rule (packages/runtime/src/paging.ts): out-of-range values are refused. */
export { type Page, pageOf } from "@herald/runtime";

export function pageInfo({ page, perPage }: Page, total: number): MessageInitShape<typeof PageInfoSchema> {
  return { page, perPage, total: BigInt(total) };
}
