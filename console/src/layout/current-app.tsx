import { createContext, useCallback, useContext, useEffect, useMemo, useState, type ReactNode } from "react";
import type { Schemas } from "@herald/client";
import { useApi } from "../api/use-api";

type App = Schemas["App"];

/** The organization's apps and the one the per-app pages (keys, devices, …) show. */
interface CurrentApp {
  apps: App[];
  loading: boolean;
  error: unknown;
  reloadApps: () => void;
  app: App | undefined;
  selectApp: (id: string) => void;
}

const KEY = "herald.console.app";
const Context = createContext<CurrentApp | undefined>(undefined);

export function useCurrentApp(): CurrentApp {
  const value = useContext(Context);
  if (!value) throw new Error("useCurrentApp outside CurrentAppProvider");
  return value;
}

/**
 * The app a page of one app (/apps/{id}/…) shows, loaded from the API; once loaded it is
 * the current app of the per-app pages too.
 */
export function useAppOfPage(appId: string) {
  const { selectApp } = useCurrentApp();
  const app = useApi("/v1/apps/{app_id}", { params: { path: { app_id: appId } } });
  useEffect(() => {
    if (app.data) selectApp(app.data.id);
  }, [app.data, selectApp]);
  return app;
}

export function CurrentAppProvider({ children }: { children: ReactNode }) {
  const { data, loading, error, reload } = useApi("/v1/apps", { params: { query: { per_page: 200 } } });
  const [selected, setSelected] = useState<string | null>(() => sessionStorage.getItem(KEY));
  const apps = data?.data ?? [];
  const app = apps.find((a) => a.id === selected) ?? apps[0];

  const selectApp = useCallback((id: string) => {
    sessionStorage.setItem(KEY, id);
    setSelected(id);
  }, []);

  useEffect(() => {
    if (app && app.id !== selected) setSelected(app.id);
  }, [app, selected]);

  const value = useMemo(
    () => ({ apps, loading, error, reloadApps: reload, app, selectApp }),
    [apps, loading, error, reload, app, selectApp],
  );
  return <Context.Provider value={value}>{children}</Context.Provider>;
}
