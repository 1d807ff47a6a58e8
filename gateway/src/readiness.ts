import { Code, ConnectError } from "@connectrpc/connect";
import { within } from "@herald/runtime";
import type { Redis } from "ioredis";
import type { CampaignClient, CredentialClient, DeviceClient } from "./backends.js";

/** A syntactically valid id that names nothing: a cheap call that must reach the service. */
const NO_ID = "00000000-0000-0000-0000-000000000000";
const TIMEOUT_MS = 2_000;

/** Answers that prove the service is up and serving; anything else means it is not. */
function answered(err: unknown): boolean {
  if (!(err instanceof ConnectError)) return false;
  return ![Code.Unavailable, Code.DeadlineExceeded, Code.Internal, Code.Unknown, Code.Canceled].includes(err.code);
}

export type ReadinessCheck = () => Promise<Record<string, boolean>>;

export interface ReadinessDeps {
  redis: Redis;
  credential: CredentialClient;
  devices: DeviceClient;
  campaigns: CampaignClient;
}

export function readinessCheck(deps: ReadinessDeps): ReadinessCheck {
  return async () => {
    const [redis, credential, deviceRegistry, campaign] = await Promise.all([
      within(TIMEOUT_MS, deps.redis.ping()).then(
        () => true,
        () => false,
      ),
      deps.credential.getApp({ appId: NO_ID }, { timeoutMs: TIMEOUT_MS }).then(() => true, answered),
      deps.devices.getDevice({ id: NO_ID }, { timeoutMs: TIMEOUT_MS }).then(() => true, answered),
      deps.campaigns.getCampaign({ id: NO_ID }, { timeoutMs: TIMEOUT_MS }).then(() => true, answered),
    ]);
    return { redis, credential, device_registry: deviceRegistry, campaign };
  };
}
