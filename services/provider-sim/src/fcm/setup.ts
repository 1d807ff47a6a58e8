import type { Logger } from "@herald/runtime/service";
import type { AdminRoute } from "../admin-api.js";
import type { Config } from "../config.js";
import type { ProviderHandler } from "../platform.js";
import type { Recorder } from "../recorder.js";
import { fcmAdminRoutes } from "./admin-routes.js";
import { FcmDeviceStore } from "./devices.js";
import { FcmService } from "./fcm-service.js";
import { AccessTokenStore } from "./oauth.js";
import { ServiceAccountStore } from "./service-accounts.js";
import { TOKEN_PATH, TokenEndpoint } from "./token-endpoint.js";

/** FCM (the OAuth token endpoint and `messages:send`) and its admin routes; `publicUrl` makes the token URI. */
export function setUpFcm(
  config: Config,
  deps: { recorder: Recorder; publicUrl: string; log: Logger },
): { handlers: ProviderHandler[]; routes: AdminRoute[] } {
  const tokenUri = `${deps.publicUrl}${TOKEN_PATH}`;
  const accounts = new ServiceAccountStore(tokenUri);
  const tokens = new AccessTokenStore(accounts);
  const devices = new FcmDeviceStore();
  return {
    handlers: [
      new TokenEndpoint({ accounts, tokens, tokenUri, ttlS: config.fcmTokenTtlS, log: deps.log }),
      new FcmService({ tokens, devices, recorder: deps.recorder, log: deps.log, strictTokens: config.fcmStrictTokens }),
    ],
    routes: fcmAdminRoutes({ accounts, devices }),
  };
}
