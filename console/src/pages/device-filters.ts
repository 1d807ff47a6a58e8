import type { Platform } from "../api/types";

export interface DeviceFilters {
  externalId: string;
  platform: Platform | "";
  language: string;
  optedIn: "" | "yes" | "no";
  invalid: "" | "yes" | "no";
}

export const NO_FILTERS: DeviceFilters = { externalId: "", platform: "", language: "", optedIn: "", invalid: "" };

export const filtersActive = (f: DeviceFilters) => Object.values(f).some((v) => v !== "");

const yesNo = (v: "" | "yes" | "no") => (v === "" ? undefined : v === "yes");

/** The filters as GET /v1/devices query parameters; the API filters and counts. */
export function filterParams(f: DeviceFilters): Record<string, string | boolean | undefined> {
  return {
    external_id: f.externalId.trim(),
    platform: f.platform,
    language: f.language.trim(),
    opted_in: yesNo(f.optedIn),
    invalid: yesNo(f.invalid),
  };
}
