import type { AppDirectory } from "../app-directory.js";
import type { ApiKeyVerifier } from "../auth/api-key-verifier.js";
import type { BackendClients } from "../backends.js";
import type { Registrations } from "../registrations.js";

/** What the /v1 route handlers need: the backends' clients and what the gateway keeps. */
export interface RouteDeps extends BackendClients {
  /** Device registrations, coalesced into RegisterDevices calls. */
  registrations: Registrations;
  apps: AppDirectory;
  apiKeys: ApiKeyVerifier;
  /** The limit of keys stored without one of their own. */
  defaultRateLimit: number;
}
