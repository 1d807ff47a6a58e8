import type { IncomingMessage, ServerResponse } from "node:http";
import type { Logger } from "@herald/runtime";
import type Provider from "oidc-provider";
import type { IdentityClient } from "../backends.js";
import { adapterClass } from "./adapter.js";
import { GrantOrgs } from "./grant-orgs.js";
import { createProvider } from "./provider.js";
import { cookieKeys, type KeySet, type SigningKeys } from "./signing-keys.js";

export interface OAuthServerOptions {
  issuer: string;
  identity: IdentityClient;
  keys: SigningKeys;
  accessTokenTtlSeconds: number;
  log: Logger;
}

interface Current {
  version: string;
  provider: Provider;
  handle: (req: IncomingMessage, res: ServerResponse) => void;
  cookieKeys: Buffer[];
}

/**
 * The authorization server of the gateway's origin. oidc-provider takes its keys when it
 * is made, so a new provider is made whenever the signing-key set changes (a rotation,
 * seen at the next periodic re-read); all its state is in the shared storage, so nothing
 * is lost by the swap.
 *
 * Requests reach the provider with the issuer's host and scheme: the URLs it writes
 * (discovery, redirects) are always the public ones, and its cookies are Secure exactly
 * when the issuer is https, whatever the hop from the ingress speaks.
 */
export class OAuthServer {
  readonly grantOrgs: GrantOrgs;
  private readonly adapter: ReturnType<typeof adapterClass>;
  private readonly issuerUrl: URL;
  private current: Current | undefined;
  private building: { version: string; current: Promise<Current> } | undefined;
  /** Builds in the order they began, and the newest that became current. */
  private builds = 0;
  private currentBuild = 0;

  constructor(private readonly opts: OAuthServerOptions) {
    this.adapter = adapterClass(opts.identity);
    this.grantOrgs = new GrantOrgs(new this.adapter("GrantOrg"));
    this.issuerUrl = new URL(opts.issuer);
  }

  get issuer(): string {
    return this.opts.issuer;
  }

  /** The provider of the current key set, with its node handler and cookie keys. */
  async instance(): Promise<Current> {
    const set = await this.opts.keys.get();
    if (this.current?.version === set.version) return this.current;
    // Concurrent first requests of a key set share one provider.
    if (this.building?.version !== set.version) {
      const built = this.build(set).finally(() => {
        if (this.building?.current === built) this.building = undefined;
      });
      this.building = { version: set.version, current: built };
    }
    return this.building.current;
  }

  private async build(set: KeySet): Promise<Current> {
    const build = ++this.builds;
    const provider = await createProvider({
      issuer: this.opts.issuer,
      keys: set,
      adapter: this.adapter,
      identity: this.opts.identity,
      grantOrgs: this.grantOrgs,
      accessTokenTtlSeconds: this.opts.accessTokenTtlSeconds,
    });
    // The headers it reads are the ones `pin` writes, never a client's.
    provider.proxy = true;
    provider.on("server_error", (_ctx: unknown, err: Error) => {
      this.opts.log.error({ err }, "oauth server error");
    });
    const built = { version: set.version, provider, handle: provider.callback(), cookieKeys: cookieKeys(set) };
    // A build that ends after a newer key set's build began serves its own callers only.
    if (build > this.currentBuild) {
      this.current = built;
      this.currentBuild = build;
    }
    return built;
  }

  /** Rewrites the request's host and scheme to the issuer's (see the class comment). */
  pin(req: IncomingMessage): void {
    req.headers.host = this.issuerUrl.host;
    req.headers["x-forwarded-host"] = this.issuerUrl.host;
    req.headers["x-forwarded-proto"] = this.issuerUrl.protocol.slice(0, -1);
    delete req.headers["x-forwarded-for"];
  }
}
