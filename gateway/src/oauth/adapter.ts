import { timestampDate, timestampFromMs } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError } from "@connectrpc/connect";
import type { IdentityClient } from "../backends.js";

/** What oidc-provider stores: a JSON object with a few well-known members. */
export type AdapterPayload = Record<string, unknown> & {
  grantId?: string;
  uid?: string;
  userCode?: string;
  consumed?: number;
};

/** oidc-provider's Adapter interface (one instance per model name). */
export interface Adapter {
  upsert(id: string, payload: AdapterPayload, expiresIn: number): Promise<void>;
  find(id: string): Promise<AdapterPayload | undefined>;
  findByUid(uid: string): Promise<AdapterPayload | undefined>;
  findByUserCode(userCode: string): Promise<AdapterPayload | undefined>;
  consume(id: string): Promise<void>;
  destroy(id: string): Promise<void>;
  revokeByGrantId(grantId: string): Promise<void>;
}

/** oidc-provider metadata of a client an organization registered: always a public client. */
export function registeredClientMetadata(client: {
  clientId: string;
  name: string;
  redirectUris: string[];
}): AdapterPayload {
  return {
    client_id: client.clientId,
    client_name: client.name,
    redirect_uris: client.redirectUris,
    token_endpoint_auth_method: "none",
    grant_types: ["authorization_code", "refresh_token"],
    response_types: ["code"],
  };
}

/** An unknown client id, or one that cannot be a client id at all. */
const noSuchClient = (err: unknown) =>
  err instanceof ConnectError && (err.code === Code.NotFound || err.code === Code.InvalidArgument);

/**
 * Storage of every oidc-provider model in PostgreSQL through the credential service's
 * OAuth* RPCs, so any number of gateway replicas share sessions, codes and tokens.
 * Clients are not models here: a lookup asks GetOAuthClient for a registered client (the
 * console's own client is static configuration and never reaches the adapter).
 * A consumed model comes back with `consumed` set, which is how oidc-provider detects a
 * reused authorization code or refresh token and revokes the grant.
 */
export function adapterClass(identity: IdentityClient): new (name: string) => Adapter {
  return class IdentityServiceAdapter implements Adapter {
    constructor(private readonly kind: string) {}

    async upsert(id: string, payload: AdapterPayload, expiresIn: number): Promise<void> {
      await identity.oAuthUpsert({
        kind: this.kind,
        id,
        payload: JSON.stringify(payload),
        expiresAt: timestampFromMs(Date.now() + expiresIn * 1000),
        ...(payload.grantId ? { grantId: payload.grantId } : {}),
        ...(payload.uid ? { uid: payload.uid } : {}),
        ...(payload.userCode ? { userCode: payload.userCode } : {}),
      });
    }

    async find(id: string): Promise<AdapterPayload | undefined> {
      if (this.kind === "Client") return this.findClient(id);
      return this.lookup({ case: "id", value: id });
    }

    findByUid(uid: string): Promise<AdapterPayload | undefined> {
      return this.lookup({ case: "uid", value: uid });
    }

    findByUserCode(userCode: string): Promise<AdapterPayload | undefined> {
      return this.lookup({ case: "userCode", value: userCode });
    }

    async consume(id: string): Promise<void> {
      await identity.oAuthConsume({ kind: this.kind, id });
    }

    async destroy(id: string): Promise<void> {
      await identity.oAuthDestroy({ kind: this.kind, id });
    }

    async revokeByGrantId(grantId: string): Promise<void> {
      await identity.oAuthRevokeByGrantId({ grantId });
    }

    private async lookup(
      key: { case: "id"; value: string } | { case: "uid"; value: string } | { case: "userCode"; value: string },
    ): Promise<AdapterPayload | undefined> {
      const res = await identity.oAuthFind({ kind: this.kind, key });
      if (res.payload === undefined) return undefined;
      const payload = JSON.parse(res.payload) as AdapterPayload;
      if (res.consumedAt) payload.consumed = Math.floor(timestampDate(res.consumedAt).getTime() / 1000);
      return payload;
    }

    private async findClient(clientId: string): Promise<AdapterPayload | undefined> {
      try {
        const { client } = await identity.getOAuthClient({ clientId });
        return client ? registeredClientMetadata(client) : undefined;
      } catch (err) {
        if (noSuchClient(err)) return undefined;
        throw err;
      }
    }
  };
}
