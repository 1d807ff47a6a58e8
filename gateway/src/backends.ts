import type { Client } from "@connectrpc/connect";
import { AndroidChannelService } from "@herald/proto/android_channel";
import { CampaignService } from "@herald/proto/campaign";
import { CredentialService } from "@herald/proto/credential";
import { DeviceRegistryService } from "@herald/proto/device";
import { IdentityService } from "@herald/proto/identity";
import { InAppMessageService } from "@herald/proto/in_app_message";
import { WebhookService } from "@herald/proto/webhook";
import { createRpcClient } from "@herald/runtime";

/** The Connect clients the gateway talks to; tests pass clients of real in-process services. */
export type CredentialClient = Client<typeof CredentialService>;
export type DeviceClient = Client<typeof DeviceRegistryService>;
export type CampaignClient = Client<typeof CampaignService>;
/** Served by the device registry, on its port. */
export type AndroidChannelClient = Client<typeof AndroidChannelService>;
/** Served by the device registry, on its port. */
export type InAppMessageClient = Client<typeof InAppMessageService>;
/** Served by the webhooks service. */
export type WebhookClient = Client<typeof WebhookService>;
/** Served by the credential service, on its port. */
export type IdentityClient = Client<typeof IdentityService>;

export interface BackendUrls {
  credentialUrl: string;
  deviceRegistryUrl: string;
  campaignUrl: string;
  /** Unset (tests that need no webhooks): a URL nothing listens on, so the routes answer 503. */
  webhooksUrl?: string;
}

export interface BackendClients {
  credential: CredentialClient;
  identity: IdentityClient;
  devices: DeviceClient;
  campaigns: CampaignClient;
  androidChannels: AndroidChannelClient;
  inAppMessages: InAppMessageClient;
  webhooks: WebhookClient;
}

/**
 * Every backend client build() needs, on the services' URLs (the gateway, its tests, and
 * the OpenAPI generator, which passes URLs that are never called). close() ends their
 * HTTP/2 sessions.
 */
export function connectBackends(urls: BackendUrls): { clients: BackendClients; close(): void } {
  const rpc = {
    credential: createRpcClient(CredentialService, urls.credentialUrl),
    identity: createRpcClient(IdentityService, urls.credentialUrl),
    devices: createRpcClient(DeviceRegistryService, urls.deviceRegistryUrl),
    campaigns: createRpcClient(CampaignService, urls.campaignUrl),
    androidChannels: createRpcClient(AndroidChannelService, urls.deviceRegistryUrl),
    inAppMessages: createRpcClient(InAppMessageService, urls.deviceRegistryUrl),
    webhooks: createRpcClient(WebhookService, urls.webhooksUrl ?? "http://127.0.0.1:9"),
  };
  return {
    clients: {
      credential: rpc.credential.client,
      identity: rpc.identity.client,
      devices: rpc.devices.client,
      campaigns: rpc.campaigns.client,
      androidChannels: rpc.androidChannels.client,
      inAppMessages: rpc.inAppMessages.client,
      webhooks: rpc.webhooks.client,
    },
    close: () => {
      for (const c of Object.values(rpc)) c.close();
    },
  };
}

/** URLs for a gateway that serves only its documents (nothing listens there). */
export const UNUSED_BACKENDS: BackendUrls = {
  credentialUrl: "http://127.0.0.1:9",
  deviceRegistryUrl: "http://127.0.0.1:9",
  campaignUrl: "http://127.0.0.1:9",
  webhooksUrl: "http://127.0.0.1:9",
};
