import {
  appItemParams,
  appParams,
  errorResponses,
  noContent,
  ok,
  listOf,
  pageQuerystring,
  timestamp,
  uuid,
  component,
} from "./common.js";

const scope = {
  type: "string",
  enum: ["app", "org"],
  description: "app: this app only (cross-app operations answer 403); org: the whole organization.",
} as const;
const kind = {
  type: "string",
  enum: ["server", "client"],
  description:
    "server (secret hk_live_…): the full rights of its scope, for backends only. client (hk_pub_…): publishable, " +
    "safe to ship inside an app; always app-scoped, it may only register devices and read, update, opt out, opt " +
    "in or delete a device whose push token it presents in the X-Herald-Push-Token header (everything else: 403).",
} as const;
const rateLimit = {
  type: "integer",
  minimum: 1,
  maximum: 1_000_000,
  description:
    "Requests per minute allowed to this key; when omitted, HERALD_DEFAULT_RATE_LIMIT (1,000) for server keys and " +
    "HERALD_CLIENT_KEY_RATE_LIMIT (120) for client keys.",
  examples: [1000],
} as const;

const keyProperties = {
  id: uuid("Key id, used in DELETE …/api-keys/{key_id}."),
  name: { type: "string", description: "Label." },
  scope,
  kind,
  app_id: {
    type: "string",
    description: "The app the key was created under (for app scope, also the app it may touch).",
  },
  prefix: {
    type: "string",
    description: "First characters of the secret, to recognise the key.",
    examples: ["hk_live_Ab3x", "hk_pub_Xy7q"],
  },
  rate_limit_per_minute: rateLimit,
  created_at: timestamp("Creation time (UTC)."),
} as const;

export const apiKeySchema = component("ApiKey", { description: "An API key, without its secret." }, keyProperties);

export const createdApiKeySchema = component(
  "CreatedApiKey",
  { description: "A new API key with its secret: shown once, never again." },
  {
    ...keyProperties,
    secret: {
      type: "string",
      description: "Use as `Authorization: Bearer <secret>`. Store it now: it cannot be shown again.",
      examples: ["hk_live_Ab3xExampleExampleExampleExample0000"],
    },
  },
);

const tags = ["API keys"];

export const createApiKeySchema = {
  tags,
  operationId: "createApiKey",
  summary: "Create an API key",
  description:
    "Org-scoped keys need an organization-scoped caller; an app-scoped key may create app-scoped keys of its own app. " +
    'A client key (`kind: "client"`) is publishable and must be app-scoped.',
  params: appParams,
  body: {
    type: "object",
    required: ["name"],
    additionalProperties: false,
    properties: {
      name: { type: "string", minLength: 1, maxLength: 100, description: "Label.", examples: ["backend"] },
      scope: { ...scope, default: "app" },
      kind: { ...kind, default: "server" },
      rate_limit_per_minute: rateLimit,
    },
  },
  response: { 201: ok("The key and its secret.", "CreatedApiKey"), ...errorResponses(400, 403, 404) },
};

export const listApiKeysSchema = {
  tags,
  operationId: "listApiKeys",
  summary: "List an app's API keys",
  params: appParams,
  querystring: pageQuerystring(),
  response: { 200: listOf("ApiKey", "A page of keys, without secrets."), ...errorResponses(400, 403, 404) },
};

export const revokeApiKeySchema = {
  tags,
  operationId: "revokeApiKey",
  summary: "Revoke an API key",
  description:
    "The key stops working at once on this gateway replica and within HERALD_AUTH_CACHE_MS (10 s by default) on the others.",
  params: appItemParams("key_id", uuid("Key id.")),
  response: { 204: noContent("Revoked."), ...errorResponses(403, 404) },
};
