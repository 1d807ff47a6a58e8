import { api, query } from "./client";
import type { Device, Page } from "./types";

/** The most devices the console reads to filter or count in the browser. */
export const DEVICE_SCAN_LIMIT = 5_000;
const PAGE = 200;

/**
 * Reads an app's devices page by page, up to DEVICE_SCAN_LIMIT. GET /v1/devices filters
 * by app only, so the console's device filters and the segment preview work on these.
 */
export async function scanDevices(appId: string, signal?: AbortSignal): Promise<{ devices: Device[]; total: number }> {
  const devices: Device[] = [];
  let total = 0;
  for (let page = 1; devices.length < DEVICE_SCAN_LIMIT; page++) {
    if (signal?.aborted) break;
    const res = await api<Page<Device>>("GET", `/v1/devices${query({ app_id: appId, page, per_page: PAGE })}`);
    total = res.total;
    devices.push(...res.data);
    if (res.data.length < PAGE || devices.length >= total) break;
  }
  return { devices, total };
}
