import type { Client } from "@connectrpc/connect";
import type { AndroidChannelService } from "@herald/proto/android_channel";
import type { CampaignService } from "@herald/proto/campaign";
import type { CredentialService } from "@herald/proto/credential";
import type { DeviceRegistryService } from "@herald/proto/device";
import type { IdentityService } from "@herald/proto/identity";

/** The Connect clients the gateway talks to; tests pass clients of real in-process services. */
export type CredentialClient = Client<typeof CredentialService>;
export type DeviceClient = Client<typeof DeviceRegistryService>;
export type CampaignClient = Client<typeof CampaignService>;
/** Served by the device registry, on its port. */
export type AndroidChannelClient = Client<typeof AndroidChannelService>;
/** Served by the credential service, on its port. */
export type IdentityClient = Client<typeof IdentityService>;
