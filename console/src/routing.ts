import { useSyncExternalStore } from "react";

/** A path router on the History API: the console has few pages and needs no more. */
export const BASE = "/console";

const listeners = new Set<() => void>();
const notify = () => {
  for (const l of listeners) l();
};
window.addEventListener("popstate", notify);

function subscribe(listener: () => void): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

const snapshot = () => location.pathname + location.search;

/** The current path below /console (e.g. "/apps/…") and its query. */
export function useLocation(): { path: string; query: URLSearchParams } {
  const full = useSyncExternalStore(subscribe, snapshot);
  const url = new URL(full, location.origin);
  const path = url.pathname.startsWith(BASE) ? url.pathname.slice(BASE.length) || "/" : url.pathname;
  return { path: path.replace(/\/+$/, "") || "/", query: url.searchParams };
}

export function href(path: string): string {
  return `${BASE}${path}`;
}

export function navigate(path: string, { replace = false } = {}): void {
  const url = href(path);
  if (replace) history.replaceState(null, "", url);
  else history.pushState(null, "", url);
  notify();
  window.scrollTo(0, 0);
}

/** Props for an anchor that navigates in-app on a plain click and stays a real link otherwise. */
export function linkProps(path: string) {
  return {
    href: href(path),
    onClick: (event: React.MouseEvent) => {
      if (event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
      event.preventDefault();
      navigate(path);
    },
  };
}

/** Matches "/campaigns/:id"-style patterns; undefined when the path does not match. */
export function match(pattern: string, path: string): Record<string, string> | undefined {
  const want = pattern.split("/");
  const got = path.split("/");
  if (want.length !== got.length) return undefined;
  const params: Record<string, string> = {};
  for (let i = 0; i < want.length; i++) {
    const w = want[i]!;
    const g = got[i]!;
    if (w.startsWith(":")) params[w.slice(1)] = decodeURIComponent(g);
    else if (w !== g) return undefined;
  }
  return params;
}
