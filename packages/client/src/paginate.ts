import type { HeraldClient } from "./client.js";
import { type FetchResult, unwrap } from "./errors.js";
import type { paths } from "./schema.js";

/** The API's list envelope: `page` counts from 1, `total` counts items across all pages. */
interface ListBody {
  data: unknown[];
  page: number;
  per_page: number;
  total: number;
}

type GetOf<P extends keyof paths> = paths[P] extends { get: infer Op } ? Op : never;
type OkJsonOf<Op> = Op extends { responses: { 200: { content: { "application/json": infer B } } } } ? B : never;

/** Every GET path that answers a list envelope: "/v1/devices", "/v1/campaigns", … */
export type ListPath = {
  [P in keyof paths]: OkJsonOf<GetOf<P>> extends ListBody ? P : never;
}[keyof paths];
/** One page of a list path. */
export type Page<P extends ListPath> = Extract<OkJsonOf<GetOf<P>>, ListBody>;
/** One item of a list path, e.g. Item<"/v1/devices"> is a Device. */
export type Item<P extends ListPath> = Page<P>["data"][number];

type ParamsOf<P extends ListPath> = GetOf<P> extends { parameters: infer X } ? X : never;
type RequiredKeys<T> = { [K in keyof T]-?: object extends Pick<T, K> ? never : K }[keyof T];
/** The path's parameters (`query.page` is where paging starts; `query.per_page` the page size). */
export type PageInit<P extends ListPath> = { params?: ParamsOf<P>; headers?: Record<string, string> };
type InitArg<P extends ListPath> =
  RequiredKeys<ParamsOf<P>> extends never ? [init?: PageInit<P>] : [init: PageInit<P> & { params: ParamsOf<P> }];

/**
 * The pages of a list, fetched one at a time as the loop asks for them, from
 * `query.page` (default 1) until `total` is reached. An error answer throws HeraldError.
 */
export async function* pages<P extends ListPath>(
  client: HeraldClient,
  path: P,
  ...[init]: InitArg<P>
): AsyncGenerator<Page<P>, void, undefined> {
  // openapi-fetch's overloads need a literal path; this loop works for any list path.
  const get = client.GET as unknown as (path: string, init: object) => Promise<FetchResult<Page<P>>>;
  const params = (init?.params ?? {}) as { query?: Record<string, unknown> };
  let page = Number(params.query?.page ?? 1);
  for (;;) {
    const body = unwrap(await get(path, { ...init, params: { ...params, query: { ...params.query, page } } }));
    yield body;
    if (body.data.length === 0 || body.page * body.per_page >= body.total) return;
    page = body.page + 1;
  }
}

/**
 * Every item of a list, page after page:
 * `for await (const device of paginate(herald, "/v1/devices", { params: { query: { app_id } } }))`.
 */
export async function* paginate<P extends ListPath>(
  client: HeraldClient,
  path: P,
  ...init: InitArg<P>
): AsyncGenerator<Item<P>, void, undefined> {
  for await (const page of pages(client, path, ...init)) yield* page.data as Item<P>[];
}
