import type { AppDirectory } from "../app-directory.js";
import type { ApiKeyVerifier } from "../auth/api-key-verifier.js";
import type { CampaignClient, CredentialClient, DeviceClient } from "../backends.js";

/** What the /v1 route handlers need. */
export interface RouteDeps {
  credential: CredentialClient;
  devices: DeviceClient;
  campaigns: CampaignClient;
  apps: AppDirectory;
  apiKeys: ApiKeyVerifier;
  /** The limit of keys stored without one of their own. */
  defaultRateLimit: number;
}
