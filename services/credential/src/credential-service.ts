import type { ServiceImpl } from "@connectrpc/connect";
import type {
  CreateApiKeyRequest,
  CreateAppRequest,
  CredentialService,
  DeleteAppRequest,
  GetAppRequest,
  GetPlatformConfigsRequest,
  GetSendCredentialsRequest,
  ListApiKeysRequest,
  ListAppsRequest,
  PutPlatformConfigRequest,
  RevokeApiKeyRequest,
  UpdateAppRequest,
  VerifyApiKeyRequest,
} from "@herald/proto/credential";
import {
  alreadyExists,
  failedPrecondition,
  invalidArgument,
  notFound,
  unauthenticated,
  type Logger,
} from "@herald/runtime";
import { displayPrefix, generateSecret, hashSecret, isWellFormedSecret, secretMatches } from "./api-key-secret.js";
import { appDeletedEvent } from "./app-deleted-event.js";
import {
  fingerprint,
  InvalidCredentialsError,
  validateApns,
  validateFcm,
  validateVapid,
  type ValidatedCredentials,
} from "./platform-credentials.js";
import * as check from "./credential-checks.js";
import type { SealedBox } from "@herald/runtime";
import type { AppRecord, CredentialStore } from "./credential-store.js";
import {
  effectiveRateLimit,
  toApiKey,
  toApiKeyKind,
  toApp,
  toKeyScope,
  toPageInfo,
  toPlatformConfig,
  toSendCredentials,
  type DefaultRateLimits,
} from "./credential-mapping.js";

export interface CredentialServiceDeps {
  store: CredentialStore;
  sealedBox: SealedBox;
  /** Requests per minute of keys without their own limit, by kind. */
  defaultRateLimits: DefaultRateLimits;
  log: Logger;
  /** Called after an app deletion committed: publishes the queued app.deleted event. */
  afterAppDeleted: () => void;
}

const INVALID_KEY = "invalid API key";

/** Binds sealed private material to its row: a blob moved to another app or platform fails to open. */
export const platformConfigSealContext = (appId: string, platform: string) => `${appId}:${platform}`;

export class CredentialServiceImpl implements ServiceImpl<typeof CredentialService> {
  constructor(private readonly deps: CredentialServiceDeps) {}

  async verifyApiKey(req: VerifyApiKeyRequest) {
    if (!isWellFormedSecret(req.secret)) throw unauthenticated(INVALID_KEY);
    const key = await this.deps.store.findActiveApiKey(hashSecret(req.secret));
    if (!key || !secretMatches(req.secret, key.secretHash)) throw unauthenticated(INVALID_KEY);
    return {
      principal: {
        orgId: key.orgId,
        scope: toKeyScope(key.scope),
        appId: key.scope === "app" ? (key.appId ?? undefined) : undefined,
        keyId: key.id,
        rateLimitPerMinute: effectiveRateLimit(key, this.deps.defaultRateLimits),
        kind: toApiKeyKind(key.kind),
      },
    };
  }

  async createApp(req: CreateAppRequest) {
    const app = {
      name: check.appName(req.name),
      platform: check.platformName(req.platform),
      bundleId: check.bundleId(req.bundleId),
    };
    if (!check.isUuid(req.orgId)) throw notFound("organization not found");
    const result = await this.deps.store.createApp({ orgId: req.orgId, ...app });
    if (!result.ok) {
      if (result.reason === "org_not_found") throw notFound("organization not found");
      throw alreadyExists(`an app with bundle_id ${app.bundleId} already exists`);
    }
    this.deps.log.info({ appId: result.app.id, orgId: req.orgId }, "app created");
    return { app: toApp(result.app) };
  }

  async getApp(req: GetAppRequest) {
    return { app: toApp(await this.requireApp(req.appId)) };
  }

  async listApps(req: ListAppsRequest) {
    const page = check.pageQuery(req.page);
    if (!check.isUuid(req.orgId)) throw notFound("organization not found");
    // A malformed app_id filter matches no app.
    if (req.appId !== undefined && !check.isUuid(req.appId)) return { apps: [], page: toPageInfo(page, 0) };
    const { apps, total } = await this.deps.store.listApps(req.orgId, req.appId, page);
    return { apps: apps.map(toApp), page: toPageInfo(page, total) };
  }

  async updateApp(req: UpdateAppRequest) {
    const patch = {
      name: req.name === undefined ? undefined : check.appName(req.name),
      platform: req.platform === undefined ? undefined : check.platformName(req.platform),
      bundleId: req.bundleId === undefined ? undefined : check.bundleId(req.bundleId),
    };
    if (!check.isUuid(req.appId)) throw appNotFound(req.appId);
    const result = await this.deps.store.updateApp(req.appId, patch);
    if (!result.ok) {
      if (result.reason === "not_found") throw appNotFound(req.appId);
      throw alreadyExists(`an app with bundle_id ${patch.bundleId ?? ""} already exists`);
    }
    return { app: toApp(result.app) };
  }

  async deleteApp(req: DeleteAppRequest) {
    if (!check.isUuid(req.appId)) throw appNotFound(req.appId);
    if (!(await this.deps.store.deleteApp(req.appId, appDeletedEvent(req.appId, new Date())))) {
      throw appNotFound(req.appId);
    }
    this.deps.log.info({ appId: req.appId }, "app deleted");
    this.deps.afterAppDeleted();
    return {};
  }

  async createApiKey(req: CreateApiKeyRequest) {
    const name = check.keyName(req.name);
    const scope = check.keyScope(req.scope);
    const kind = check.keyKind(req.kind, scope);
    const rateLimitPerMinute = check.rateLimit(req.rateLimitPerMinute);
    const app = await this.requireApp(req.appId);
    const secret = generateSecret(kind);
    const key = await this.deps.store.createApiKey({
      orgId: app.orgId,
      appId: app.id,
      scope,
      kind,
      name,
      prefix: displayPrefix(secret),
      secretHash: hashSecret(secret),
      rateLimitPerMinute,
    });
    if (!key) throw appNotFound(req.appId);
    this.deps.log.info({ keyId: key.id, appId: app.id, scope, kind }, "API key created");
    return { key: toApiKey(key, this.deps.defaultRateLimits), secret };
  }

  async listApiKeys(req: ListApiKeysRequest) {
    const page = check.pageQuery(req.page);
    const app = await this.requireApp(req.appId);
    const { keys, total } = await this.deps.store.listApiKeys(app.id, page);
    return { keys: keys.map((k) => toApiKey(k, this.deps.defaultRateLimits)), page: toPageInfo(page, total) };
  }

  async revokeApiKey(req: RevokeApiKeyRequest) {
    const app = await this.requireApp(req.appId);
    if (!check.isUuid(req.keyId) || !(await this.deps.store.revokeApiKey(app.id, req.keyId))) {
      throw notFound(check.isUuid(req.keyId) ? `API key ${req.keyId} not found` : "API key not found");
    }
    this.deps.log.info({ keyId: req.keyId, appId: app.id }, "API key revoked");
    return {};
  }

  async getPlatformConfigs(req: GetPlatformConfigsRequest) {
    const app = await this.requireApp(req.appId);
    const configs = await this.deps.store.getPlatformConfigs(app.id);
    return { configs: configs.map(toPlatformConfig) };
  }

  async putPlatformConfig(req: PutPlatformConfigRequest) {
    const app = await this.requireApp(req.appId);
    const validated = validateCredentials(req.credentials, app);
    const box = this.deps.sealedBox;
    const stored = await this.deps.store.putPlatformConfig({
      appId: app.id,
      platform: validated.platform,
      publicData: validated.publicData,
      sealed: box.seal(validated.privateMaterial, platformConfigSealContext(app.id, validated.platform)),
      keyVersion: box.keyVersion,
      fingerprint: fingerprint(validated.privateMaterial),
    });
    if (!stored) throw appNotFound(req.appId);
    const { platform, fingerprint: print } = stored;
    this.deps.log.info({ appId: app.id, platform, fingerprint: print }, "platform config stored");
    return { config: toPlatformConfig(stored) };
  }

  async getSendCredentials(req: GetSendCredentialsRequest) {
    const platform = check.platformName(req.platform);
    const config = check.isUuid(req.appId) ? await this.deps.store.getPlatformConfig(req.appId, platform) : undefined;
    if (!config) throw notFound(`${appLabel(req.appId)} has no ${platform} platform config`);
    const material = this.deps.sealedBox.open(
      config.sealed,
      platformConfigSealContext(config.appId, platform),
      config.keyVersion,
    );
    return toSendCredentials(config, material);
  }

  private async requireApp(appId: string): Promise<AppRecord> {
    const app = check.isUuid(appId) ? await this.deps.store.getApp(appId) : undefined;
    if (!app) throw appNotFound(appId);
    return app;
  }
}

/** Echoes the id only when it is a UUID: callers' arbitrary strings stay out of messages. */
const appLabel = (appId: string) => (check.isUuid(appId) ? `app ${appId}` : "app");
const appNotFound = (appId: string) => notFound(`${appLabel(appId)} not found`);

function validateCredentials(
  credentials: PutPlatformConfigRequest["credentials"],
  app: AppRecord,
): ValidatedCredentials {
  try {
    switch (credentials.case) {
      case "apns":
        return validateApns(credentials.value, app.bundleId);
      case "fcm":
        return validateFcm(credentials.value);
      case "vapid":
        return validateVapid(credentials.value);
      default:
        throw invalidArgument("one of apns, fcm or vapid credentials is required");
    }
  } catch (err) {
    if (err instanceof InvalidCredentialsError) throw failedPrecondition(err.message);
    throw err;
  }
}
