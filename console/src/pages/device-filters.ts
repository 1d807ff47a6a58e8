import type { Device, Platform } from "../api/types";

export interface DeviceFilters {
  externalId: string;
  platform: Platform | "";
  language: string;
  optedIn: "" | "yes" | "no";
  invalid: "" | "yes" | "no";
}

export const NO_FILTERS: DeviceFilters = { externalId: "", platform: "", language: "", optedIn: "", invalid: "" };

export const filtersActive = (f: DeviceFilters) => Object.values(f).some((v) => v !== "");

const yesNo = (want: "" | "yes" | "no", value: boolean) => want === "" || (want === "yes") === value;

export function matchesFilters(d: Device, f: DeviceFilters): boolean {
  const search = f.externalId.trim().toLowerCase();
  return (
    (!search || (d.external_id ?? "").toLowerCase().includes(search)) &&
    (!f.platform || d.platform === f.platform) &&
    (!f.language.trim() || (d.language ?? "").toLowerCase() === f.language.trim().toLowerCase()) &&
    yesNo(f.optedIn, d.opted_in) &&
    yesNo(f.invalid, d.invalid)
  );
}
