// The part of oidc-provider 9 (which ships no type declarations) that the gateway uses.
declare module "oidc-provider" {
  import type { IncomingMessage, ServerResponse } from "node:http";

  export interface InteractionDetails {
    uid: string;
    jti: string;
    returnTo: string;
    prompt: { name: string; reasons: string[]; details: Record<string, unknown> };
    params: Record<string, unknown> & { client_id: string; redirect_uri?: string; org_id?: string };
    session?: { accountId?: string; uid?: string };
    grantId?: string;
    lastSubmission?: Record<string, unknown>;
  }

  export interface GrantInstance {
    addOIDCScope(scope: string): void;
    addOIDCClaims(claims: string[]): void;
    addResourceScope(resource: string, scope: string): void;
    save(): Promise<string>;
    exp?: number;
  }

  export interface InteractionResults {
    login?: { accountId: string };
    consent?: { grantId: string };
    error?: string;
    error_description?: string;
  }

  export interface ClientInstance {
    clientId: string;
    clientName?: string;
    redirectUris: string[];
    grantTypeAllowed(type: string): boolean;
  }

  export interface ProviderErrorClass {
    new (description?: string): Error & { error: string; error_description?: string; status: number };
  }

  export const errors: {
    InvalidGrant: ProviderErrorClass;
    InvalidTarget: ProviderErrorClass;
    AccessDenied: ProviderErrorClass;
    InvalidRequest: ProviderErrorClass;
    SessionNotFound: ProviderErrorClass;
  };

  export default class Provider {
    constructor(issuer: string, configuration: Record<string, unknown>);
    issuer: string;
    proxy: boolean;
    maxIpsCount: number;
    callback(): (req: IncomingMessage, res: ServerResponse) => void;
    interactionDetails(req: IncomingMessage, res: ServerResponse): Promise<InteractionDetails>;
    interactionFinished(
      req: IncomingMessage,
      res: ServerResponse,
      result: InteractionResults,
      opts?: { mergeWithLastSubmission?: boolean },
    ): Promise<void>;
    // biome-ignore lint/suspicious/noExplicitAny: each event passes its own arguments; listeners name theirs
    on(event: string, listener: (...args: any[]) => void): this;
    // biome-ignore lint/suspicious/noExplicitAny: oidc-provider's Koa context has no published types
    use(middleware: (ctx: any, next: () => Promise<void>) => Promise<void>): this;
    Grant: {
      new (init: { accountId: string; clientId: string }): GrantInstance;
      find(id: string): Promise<GrantInstance | undefined>;
    };
    Client: { find(id: string): Promise<ClientInstance | undefined> };
  }
}
