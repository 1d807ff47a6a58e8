import type { operations } from "@herald/client";
import type { Platform } from "./platforms";

export interface DeviceFilters {
  externalId: string;
  platform: Platform | "";
  language: string;
  optedIn: "" | "yes" | "no";
  invalid: "" | "yes" | "no";
}

export const NO_FILTERS: DeviceFilters = { externalId: "", platform: "", language: "", optedIn: "", invalid: "" };

export const filtersActive = (f: DeviceFilters) => Object.values(f).some((v) => v !== "");

type DeviceQuery = NonNullable<operations["listDevices"]["parameters"]["query"]>;

const yesNo = (v: "" | "yes" | "no") => (v === "" ? undefined : v === "yes");

/** The filters as GET /v1/devices query parameters (unset ones left out); the API filters and counts. */
export function filterParams(
  f: DeviceFilters,
): Pick<DeviceQuery, "external_id" | "platform" | "language" | "opted_in" | "invalid"> {
  return {
    external_id: f.externalId.trim() || undefined,
    platform: f.platform || undefined,
    language: f.language.trim() || undefined,
    opted_in: yesNo(f.optedIn),
    invalid: yesNo(f.invalid),
  };
}
