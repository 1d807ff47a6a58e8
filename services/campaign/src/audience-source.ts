import type { Client } from "@connectrpc/connect";
import type { MessageInitShape } from "@bufbuild/protobuf";
import { Platform } from "@herald/proto/common";
import type { AudienceDevice, AudienceFilterSchema, DeviceRegistryService } from "@herald/proto/device";
import type { PlatformName, Target } from "./campaign.js";

export type { AudienceDevice };

export interface AudiencePageQuery {
  appId: string;
  target: Target;
  platform: PlatformName;
  /** Exclusive; undefined: from the start. */
  afterDeviceId: string | undefined;
  pageSize: number;
}

/** The targetable devices of a campaign, as the device registry yields them in id order. */
export interface AudienceSource {
  count(appId: string, target: Target): Promise<number>;
  pages(query: AudiencePageQuery, signal: AbortSignal): AsyncIterable<AudienceDevice[]>;
}

export const PLATFORM_ENUM: Record<PlatformName, Platform> = {
  ios: Platform.IOS,
  android: Platform.ANDROID,
  web: Platform.WEB,
};

export function audienceFilter(target: Target): MessageInitShape<typeof AudienceFilterSchema> {
  switch (target.kind) {
    case "all":
      return { target: { case: "all", value: {} } };
    case "external_ids":
      return { target: { case: "externalIds", value: { externalIds: target.externalIds } } };
    case "segment":
      return { target: { case: "segmentId", value: target.segmentId } };
    case "device_ids":
      return { target: { case: "deviceIds", value: { deviceIds: target.deviceIds } } };
  }
}

export class IdleStreamError extends Error {
  constructor(ms: number) {
    super(`audience stream sent nothing for ${ms} ms`);
    this.name = "IdleStreamError";
  }
}

/**
 * StreamAudience over gRPC. A stream may run for as long as the fan-out takes to
 * publish what it yields, so it has no overall deadline; instead each page must arrive
 * within idleTimeoutMs of being asked for.
 */
export class RegistryAudience implements AudienceSource {
  constructor(
    private readonly client: Client<typeof DeviceRegistryService>,
    private readonly idleTimeoutMs = 30_000,
  ) {}

  async count(appId: string, target: Target): Promise<number> {
    const res = await this.client.countAudience({ appId, filter: audienceFilter(target) });
    return Number(res.count);
  }

  async *pages(query: AudiencePageQuery, signal: AbortSignal): AsyncIterable<AudienceDevice[]> {
    const abort = new AbortController();
    const forward = () => abort.abort(signal.reason);
    signal.addEventListener("abort", forward, { once: true });
    try {
      const stream = this.client.streamAudience(
        {
          appId: query.appId,
          filter: audienceFilter(query.target),
          platform: PLATFORM_ENUM[query.platform],
          afterDeviceId: query.afterDeviceId ?? "",
          pageSize: query.pageSize,
        },
        { signal: abort.signal, timeoutMs: 0 },
      );
      const it = stream[Symbol.asyncIterator]();
      for (;;) {
        const timer = setTimeout(() => abort.abort(new IdleStreamError(this.idleTimeoutMs)), this.idleTimeoutMs);
        let next: IteratorResult<{ devices: AudienceDevice[] }>;
        try {
          next = await it.next();
        } finally {
          clearTimeout(timer);
        }
        if (next.done) return;
        yield next.value.devices;
      }
    } finally {
      signal.removeEventListener("abort", forward);
      // Ends the call when the caller stops early (a batch boundary, shutdown).
      abort.abort();
    }
  }
}
