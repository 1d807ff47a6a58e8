import { androidChannelSchema } from "./android-channels.js";
import { createdWebhookSchema, webhookAttemptSchema, webhookSchema } from "./webhooks.js";
import { apiKeySchema, createdApiKeySchema } from "./api-keys.js";
import { appSchema } from "./apps.js";
import { campaignContentSchema, campaignSchema, campaignStatsSchema } from "./campaigns.js";
import { errorSchema } from "./common.js";
import { deliverySchema, deviceDeliverySchema, userErasureSchema } from "./deliveries.js";
import { deviceSchema } from "./devices.js";
import {
  deviceInAppMessageSchema,
  inAppAudienceAllSchema,
  inAppAudienceExternalIdsSchema,
  inAppAudienceExternalIdsStoredSchema,
  inAppAudienceSegmentSchema,
  inAppMessageSchema,
  inAppMessageStatsSchema,
} from "./in-app-messages.js";
import { acceptedInvitationSchema, createdInvitationSchema, invitationSchema } from "./invitations.js";
import { meSchema, memberSchema, userSchema } from "./members.js";
import { oauthClientSchema } from "./oauth-clients.js";
import { orgSchema } from "./org.js";
import {
  androidConfigSchema,
  androidInputSchema,
  iosConfigSchema,
  iosInputSchema,
  platformConfigsSchema,
  webConfigSchema,
  webInputSchema,
  webPushConfigSchema,
} from "./platform-config.js";
import { segmentRuleSchema, segmentSchema } from "./segments.js";

/**
 * The named schemas (`$id`) that routes reference as `Name#`: they become
 * components.schemas of the OpenAPI document and are known to every validator.
 */
export const sharedSchemas = [
  errorSchema,
  appSchema,
  apiKeySchema,
  createdApiKeySchema,
  deviceSchema,
  iosInputSchema,
  androidInputSchema,
  webInputSchema,
  iosConfigSchema,
  androidConfigSchema,
  webConfigSchema,
  platformConfigsSchema,
  webPushConfigSchema,
  campaignStatsSchema,
  campaignContentSchema,
  campaignSchema,
  deliverySchema,
  deviceDeliverySchema,
  userErasureSchema,
  segmentRuleSchema,
  segmentSchema,
  androidChannelSchema,
  webhookSchema,
  createdWebhookSchema,
  webhookAttemptSchema,
  inAppAudienceAllSchema,
  inAppAudienceSegmentSchema,
  inAppAudienceExternalIdsSchema,
  inAppAudienceExternalIdsStoredSchema,
  inAppMessageStatsSchema,
  inAppMessageSchema,
  deviceInAppMessageSchema,
  userSchema,
  memberSchema,
  meSchema,
  orgSchema,
  invitationSchema,
  createdInvitationSchema,
  acceptedInvitationSchema,
  oauthClientSchema,
];
