import type { App } from "@herald/proto/credential";
import { BoundedCache } from "@herald/runtime";
import { assertAppAccess } from "./authorize.js";
import type { CredentialClient } from "./backends.js";
import type { Principal } from "./principal.js";

/**
 * Apps by id, for authorization: which org owns an app is needed on almost every request,
 * so answers of GetApp are kept for a few seconds. The credential service stays the
 * truth; changes made through this gateway refresh the cache at once.
 */
export class AppDirectory {
  private readonly cache: BoundedCache<App>;

  constructor(
    private readonly credential: CredentialClient,
    ttlMs = 3_000,
    opts: { maxEntries?: number; now?: () => number } = {},
  ) {
    this.cache = new BoundedCache({ maxEntries: opts.maxEntries ?? 10_000, ttlMs, now: opts.now });
  }

  /** The app; NOT_FOUND from the credential service when there is none. */
  get(appId: string): Promise<App> {
    return this.cache.get(appId.toLowerCase(), async () => {
      const { app } = await this.credential.getApp({ appId });
      if (!app) throw new Error("GetApp answered without an app");
      return app;
    });
  }

  /** The app if the principal may use it: 404 when unknown, 403 when it is not theirs. */
  async authorized(principal: Principal, appId: string): Promise<App> {
    const app = await this.get(appId);
    assertAppAccess(principal, app);
    return app;
  }

  remember(app: App): void {
    this.cache.set(app.id.toLowerCase(), app);
  }

  forget(appId: string): void {
    this.cache.delete(appId.toLowerCase());
  }
}
