import type { AppDirectory } from "../app-directory.js";
import type { ApiKeyVerifier } from "../auth/api-key-verifier.js";
import type {
  AndroidChannelClient,
  CampaignClient,
  CredentialClient,
  DeviceClient,
  IdentityClient,
  InAppMessageClient,
  WebhookClient,
} from "../backends.js";
import type { Registrations } from "../registrations.js";

/** What the /v1 route handlers need. */
export interface RouteDeps {
  credential: CredentialClient;
  identity: IdentityClient;
  devices: DeviceClient;
  /** Device registrations, coalesced into RegisterDevices calls. */
  registrations: Registrations;
  campaigns: CampaignClient;
  androidChannels: AndroidChannelClient;
  inAppMessages: InAppMessageClient;
  webhooks: WebhookClient;
  apps: AppDirectory;
  apiKeys: ApiKeyVerifier;
  /** The limit of keys stored without one of their own. */
  defaultRateLimit: number;
}
