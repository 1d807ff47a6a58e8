import { errorResponses, listOf, noContent, ok, pageQuerystring, pathParams, timestamp, component } from "./common.js";

const clientId = {
  type: "string",
  pattern: "^[A-Za-z0-9_-]{1,128}$",
  description: "The client's id, sent as client_id in the authorization flow.",
  examples: ["hc_Xb0qYtKmRr3dV8aPq2WnLs1e"],
} as const;

const redirectUris = {
  type: "array",
  minItems: 1,
  maxItems: 10,
  uniqueItems: true,
  description:
    "Exact redirect URIs (no wildcards, no fragment): https, or http on a loopback address " +
    "(http://127.0.0.1:PORT/callback) for native apps and CLIs.",
  items: { type: "string", format: "uri", maxLength: 2000, examples: ["http://127.0.0.1:53682/callback"] },
} as const;

const name = {
  type: "string",
  minLength: 1,
  maxLength: 200,
  description: "Shown on the sign-in page.",
  examples: ["Release CLI"],
} as const;

export const oauthClientSchema = component(
  "OAuthClient",
  {
    description:
      "A public OAuth 2.1 client of the organization: authorization code with PKCE (S256), no client secret.",
  },
  {
    client_id: clientId,
    name,
    redirect_uris: redirectUris,
    created_at: timestamp("Registration time (UTC)."),
  },
);

const tags = ["OAuth clients"];

export const createOAuthClientSchema = {
  tags,
  operationId: "createOAuthClient",
  summary: "Register an OAuth client",
  description: "Its users sign in at the gateway's authorization endpoint and get session tokens for /v1.",
  body: {
    type: "object",
    required: ["name", "redirect_uris"],
    additionalProperties: false,
    properties: { name, redirect_uris: redirectUris },
  },
  response: { 201: ok("The registered client.", "OAuthClient"), ...errorResponses(400, 403) },
};

export const listOAuthClientsSchema = {
  tags,
  operationId: "listOAuthClients",
  summary: "List the organization's OAuth clients",
  description: "The console's own client is built in and not listed.",
  querystring: pageQuerystring(),
  response: { 200: listOf("OAuthClient", "A page of clients."), ...errorResponses(400, 403) },
};

export const deleteOAuthClientSchema = {
  tags,
  operationId: "deleteOAuthClient",
  summary: "Delete an OAuth client",
  description:
    "Sign-ins and token refreshes through the client stop working; access tokens it got run out on their own.",
  params: pathParams({ client_id: clientId }),
  response: { 204: noContent("Deleted."), ...errorResponses(403, 404) },
};
