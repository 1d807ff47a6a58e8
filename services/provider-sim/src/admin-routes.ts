import { intParam, type AdminRoute } from "./admin-api.js";
import { InputError } from "./errors.js";
import { parseFaultInput, type Faults } from "./faults.js";
import { isPlatform, PLATFORMS, type Platform } from "./platform.js";
import type { Recorder } from "./recorder.js";
import type { Stats } from "./stats.js";

const DEFAULT_PAGE = 100;
const MAX_PAGE = 10_000;

/** Admin routes shared by every platform: health, recorded deliveries, faults, request stats. */
export function sharedAdminRoutes(deps: { recorder: Recorder; faults: Faults; stats: Stats }): AdminRoute[] {
  const { recorder, faults, stats } = deps;
  return [
    { method: "GET", path: /^\/healthz$/, handle: () => ({ status: 200, body: { status: "ok" } }) },
    {
      method: "GET",
      path: /^\/admin\/deliveries$/,
      handle: ({ query }) => {
        const limit = intParam(query, "limit", 1, MAX_PAGE) ?? DEFAULT_PAGE;
        const deliveries = recorder.query({
          platform: platformParam(query),
          // `subscription_id` is the Web Push name of a target; `target` works for every platform.
          target: query.get("target") ?? query.get("subscription_id") ?? undefined,
          after: intParam(query, "after", 0, Number.MAX_SAFE_INTEGER),
          limit,
        });
        const next = deliveries.length === limit ? deliveries[deliveries.length - 1]!.seq : null;
        return { status: 200, body: { deliveries, next_after: next } };
      },
    },
    {
      method: "GET",
      path: /^\/admin\/deliveries\/count$/,
      handle: ({ query }) => ({ status: 200, body: recorder.count(platformParam(query)) }),
    },
    {
      method: "DELETE",
      path: /^\/admin\/deliveries$/,
      handle: () => {
        recorder.clear();
        return { status: 204 };
      },
    },
    {
      method: "PUT",
      path: /^\/admin\/faults\/([^/]+)$/,
      handle: ({ params, body }) => {
        const platform = platformPath(params[0]!);
        return { status: 200, body: { platform, faults: faults.set(platform, parseFaultInput(body)) } };
      },
    },
    {
      method: "GET",
      path: /^\/admin\/faults\/([^/]+)$/,
      handle: ({ params }) => {
        const platform = platformPath(params[0]!);
        return { status: 200, body: { platform, faults: faults.get(platform) ?? null } };
      },
    },
    {
      method: "DELETE",
      path: /^\/admin\/faults\/([^/]+)$/,
      handle: ({ params }) => {
        faults.clear(platformPath(params[0]!));
        return { status: 204 };
      },
    },
    { method: "GET", path: /^\/admin\/stats$/, handle: () => ({ status: 200, body: stats.snapshot() }) },
    {
      method: "DELETE",
      path: /^\/admin\/stats$/,
      handle: () => {
        stats.reset();
        return { status: 204 };
      },
    },
  ];
}

function platformParam(query: URLSearchParams): Platform | undefined {
  const p = query.get("platform");
  return p === null || p === "" ? undefined : platformPath(p);
}

function platformPath(p: string): Platform {
  if (!isPlatform(p)) throw new InputError(`platform must be one of ${PLATFORMS.join(", ")}`);
  return p;
}
