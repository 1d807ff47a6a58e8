import { type FetchResult, type paths, unwrap } from "@herald/client";
import { useCallback, useEffect, useRef, useState } from "react";
import { herald } from "./herald";

/** Every path of the API that answers GET. */
export type GetPath = { [P in keyof paths]: paths[P] extends { get: object } ? P : never }[keyof paths];
type GetOf<P extends GetPath> = paths[P] extends { get: infer Op } ? Op : never;
/** The parameters of a GET, as herald.GET takes them: `{ params: { path: …, query: … } }`. */
export type GetInit<P extends GetPath> = GetOf<P> extends { parameters: infer X } ? { params: X } : never;
/** What a GET answers with 200. */
export type GetBody<P extends GetPath> =
  GetOf<P> extends { responses: { 200: { content: { "application/json": infer B } } } } ? B : never;

export interface Resource<T> {
  data: T | undefined;
  error: unknown;
  loading: boolean;
  reload: () => void;
}

// herald.GET's overloads need a literal path; this hook works for any GET path.
const get = herald.GET as unknown as (path: string, init: object) => Promise<FetchResult<unknown>>;

/**
 * GETs `path` with `init` (null: nothing to load yet), again on reload() and every
 * `pollMs` while mounted; the last good data stays shown while a reload runs or fails.
 */
export function useApi<P extends GetPath>(path: P, init: GetInit<P> | null, pollMs?: number): Resource<GetBody<P>> {
  // What is asked, as a value: another path or other parameters ask anew.
  const request = init === null ? null : JSON.stringify([path, init]);
  const [data, setData] = useState<GetBody<P>>();
  const [error, setError] = useState<unknown>();
  const [loading, setLoading] = useState(request !== null);
  const [tick, setTick] = useState(0);
  const latest = useRef(0);
  const shownRequest = useRef(request);

  // biome-ignore lint/correctness/useExhaustiveDependencies: tick asks again (reload() and polling)
  useEffect(() => {
    // A change of request shows nothing stale from the previous one.
    if (shownRequest.current !== request) {
      shownRequest.current = request;
      setData(undefined);
    }
    if (request === null) {
      setData(undefined);
      setLoading(false);
      return;
    }
    const call = ++latest.current;
    setLoading(true);
    const [p, i] = JSON.parse(request) as [string, object];
    get(p, i)
      .then(unwrap)
      .then(
        (value) => {
          if (call !== latest.current) return;
          setData(value as GetBody<P>);
          setError(undefined);
          setLoading(false);
        },
        (err: unknown) => {
          if (call !== latest.current) return;
          setError(err);
          setLoading(false);
        },
      );
  }, [request, tick]);

  useEffect(() => {
    if (!pollMs || request === null) return;
    const id = setInterval(() => setTick((t) => t + 1), pollMs);
    return () => clearInterval(id);
  }, [pollMs, request]);

  const reload = useCallback(() => setTick((t) => t + 1), []);
  return { data, error, loading, reload };
}
