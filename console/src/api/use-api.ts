import { useCallback, useEffect, useRef, useState } from "react";
import { api } from "./client";

export interface Resource<T> {
  data: T | undefined;
  error: unknown;
  loading: boolean;
  reload: () => void;
}

/**
 * GETs `path` (null: nothing to load yet), again on reload() and every `pollMs` while
 * mounted; the last good data stays shown while a reload runs or fails.
 */
export function useApi<T>(path: string | null, pollMs?: number): Resource<T> {
  const [data, setData] = useState<T>();
  const [error, setError] = useState<unknown>();
  const [loading, setLoading] = useState(path !== null);
  const [tick, setTick] = useState(0);
  const latest = useRef(0);
  const shownPath = useRef(path);

  // biome-ignore lint/correctness/useExhaustiveDependencies: tick asks again (reload() and polling)
  useEffect(() => {
    // A path change shows nothing stale from the previous one.
    if (shownPath.current !== path) {
      shownPath.current = path;
      setData(undefined);
    }
    if (path === null) {
      setData(undefined);
      setLoading(false);
      return;
    }
    const call = ++latest.current;
    setLoading(true);
    api<T>("GET", path).then(
      (value) => {
        if (call !== latest.current) return;
        setData(value);
        setError(undefined);
        setLoading(false);
      },
      (err: unknown) => {
        if (call !== latest.current) return;
        setError(err);
        setLoading(false);
      },
    );
  }, [path, tick]);

  useEffect(() => {
    if (!pollMs || path === null) return;
    const id = setInterval(() => setTick((t) => t + 1), pollMs);
    return () => clearInterval(id);
  }, [pollMs, path]);

  const reload = useCallback(() => setTick((t) => t + 1), []);
  return { data, error, loading, reload };
}
