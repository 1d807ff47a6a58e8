import { invalidArgument } from "@herald/runtime";
import type { ListDevicesRequest } from "@herald/proto/device";
import { checkExternalId, languageCode } from "./device-checks.js";
import { platformName } from "./platform.js";
import type { DevicePlatform } from "./push-token.js";

/** The filters of a device listing; every set one must match (AND). */
export interface DeviceListFilter {
  platform?: DevicePlatform;
  /** Lower-case ISO 639-1 code, as stored. */
  language?: string;
  optedIn?: boolean;
  invalid?: boolean;
  /** Exact match. */
  externalId?: string;
}

/** The filters of a ListDevices request, validated and normalised like the fields they match. */
export function deviceListFilter(req: ListDevicesRequest): DeviceListFilter {
  const filter: DeviceListFilter = {};
  if (req.platform !== undefined) {
    filter.platform = platformName(req.platform) ?? refuse("platform must be ios, android or web when set");
  }
  if (req.language !== undefined) {
    filter.language =
      languageCode(req.language) ?? refuse('language must be an ISO 639-1 code such as "en" or "pt-BR"');
  }
  if (req.optedIn !== undefined) filter.optedIn = req.optedIn;
  if (req.invalid !== undefined) filter.invalid = req.invalid;
  if (req.externalId !== undefined) {
    if (req.externalId === "") refuse("external_id must not be empty when set");
    filter.externalId = checkExternalId(req.externalId);
  }
  return filter;
}

/**
 * The WHERE of a listing of one app's devices, every value a parameter ($1 is the app).
 * Only columns of the listing index (migrations/004_device_listing_index.sql) or of the
 * external id index, so a filtered page and its count read an index, never the table.
 */
export function deviceListWhere(appId: string, filter: DeviceListFilter): { where: string; values: unknown[] } {
  const values: unknown[] = [appId];
  const where = ["app_id = $1::uuid"];
  const add = (column: string, value: unknown) => {
    values.push(value);
    where.push(`${column} = $${values.length}`);
  };
  if (filter.platform !== undefined) add("platform", filter.platform);
  if (filter.language !== undefined) add("language", filter.language);
  if (filter.optedIn !== undefined) add("opted_in", filter.optedIn);
  if (filter.invalid !== undefined) add("invalid", filter.invalid);
  if (filter.externalId !== undefined) add("external_id", filter.externalId);
  return { where: where.join(" AND "), values };
}

function refuse(message: string): never {
  throw invalidArgument(message);
}
