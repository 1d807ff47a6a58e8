import type { FastifySchema } from "fastify";
import type { IncomingHttpHeaders } from "node:http";
import type { Principal } from "./principal.js";
import { errors } from "./schemas/common.js";

/**
 * What a publishable client key (hk_pub_…, shipped inside apps) may call, declared once
 * per route as `config: { clientKey }` and checked by the role hook (member-roles.ts):
 * - "allowed": a client key may call the route (its app scope still applies);
 * - "device-proof": only with the device's push token in the X-Herald-Push-Token header,
 *   which the route compares with the stored token (device-possession.ts);
 * - absent: 403 for client keys. Server keys and sessions are not affected.
 */
export type ClientKeyAccess = "allowed" | "device-proof";

declare module "fastify" {
  interface FastifyContextConfig {
    /** Whether a client key may call the route; absent: it may not. */
    clientKey?: ClientKeyAccess;
  }
}

/** How a client key proves possession of a device: the push token it registered, as registered. */
export const PUSH_TOKEN_HEADER = "X-Herald-Push-Token";
const PUSH_TOKEN_HEADER_KEY = PUSH_TOKEN_HEADER.toLowerCase();

export const CLIENT_KEY_REFUSED =
  "a client key (hk_pub_…) may only register devices and read, update, opt out, opt in or delete a device, " +
  `or fetch and acknowledge its in-app messages, with its push token in the ${PUSH_TOKEN_HEADER} header; use a ` +
  "server key or a signed-in session for this";
export const PUSH_TOKEN_REQUIRED = `a client key must prove possession of the device: send its push token in the ${PUSH_TOKEN_HEADER} header`;
export const PUSH_TOKEN_MISMATCH = `${PUSH_TOKEN_HEADER} does not match this device's push token`;

export const isClientKeyAccess = (value: unknown): value is ClientKeyAccess =>
  value === "allowed" || value === "device-proof";

export const isClientKey = (principal: Principal): boolean => principal.keyKind === "client";

/** The presented push token, when the request carries exactly one non-empty value. */
export function presentedPushToken(headers: IncomingHttpHeaders): string | undefined {
  const value = headers[PUSH_TOKEN_HEADER_KEY];
  return typeof value === "string" && value.length > 0 ? value : undefined;
}

/** Why a client key may not call a route declaring `access`, or null when it may (so far). */
export function clientKeyDenial(access: unknown, headers: IncomingHttpHeaders): string | null {
  if (!isClientKeyAccess(access)) return CLIENT_KEY_REFUSED;
  if (access === "device-proof" && presentedPushToken(headers) === undefined) return PUSH_TOKEN_REQUIRED;
  return null;
}

const clientKeyNote = (access: ClientKeyAccess): string =>
  access === "allowed"
    ? "Client keys (hk_pub_…) may call this too, for their own app."
    : `Client keys (hk_pub_…) may call this with the device's push token in the ${PUSH_TOKEN_HEADER} header.`;

// No length limit: the header is ignored for server keys and sessions, and for a client
// key a token longer than any registered one is just a wrong token (403), not a 400 that
// these routes do not document. Its size is bounded by the server's header limit.
const pushTokenHeader = {
  type: "object",
  properties: {
    [PUSH_TOKEN_HEADER_KEY]: {
      type: "string",
      description:
        "Client keys only: the device's push token exactly as registered (for web, the PushSubscription JSON " +
        "text), proving possession of the device. Ignored for server keys and sessions.",
    },
  },
} as const;

/**
 * The schema of a route client keys may call, with that documented (description,
 * x-herald-client-key, the proof header). Every other route is refused to client keys,
 * which its 403 answer already covers: its schema stays as it is.
 */
export function documentClientKey(schema: FastifySchema, access: ClientKeyAccess | undefined): FastifySchema {
  if (access === undefined) return schema;
  const doc = schema as { description?: string; response?: Record<string, unknown>; headers?: unknown };
  const note = clientKeyNote(access);
  const out: FastifySchema & Record<string, unknown> = {
    ...doc,
    description: doc.description ? `${doc.description}\n\n${note}` : note,
    "x-herald-client-key": access,
  };
  if (access === "device-proof" && doc.headers === undefined) out.headers = pushTokenHeader;
  if (doc.response) out.response = { ...doc.response, 403: errors[403] };
  return out;
}
