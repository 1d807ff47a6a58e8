import { Select } from "@mantine/core";
import { useCurrentApp } from "./current-app";

/** Which app the per-app pages show. */
export function AppPicker() {
  const { apps, app, selectApp } = useCurrentApp();
  if (apps.length === 0) return null;
  return (
    <Select
      aria-label="App"
      size="xs"
      w={{ base: 140, sm: 220 }}
      data={apps.map((a) => ({ value: a.id, label: a.name }))}
      value={app?.id ?? null}
      onChange={(id) => id && selectApp(id)}
      allowDeselect={false}
      searchable={apps.length > 8}
      comboboxProps={{ withinPortal: true }}
    />
  );
}

/** The app a per-app page needs, or a hint to create one. */
export function useRequiredApp() {
  const { app, apps, loading } = useCurrentApp();
  return { app, noApps: !loading && apps.length === 0 };
}
