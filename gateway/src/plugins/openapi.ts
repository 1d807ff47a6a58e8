import swagger from "@fastify/swagger";
import swaggerUi from "@fastify/swagger-ui";
import { API_ERRORS, PAGING } from "@herald/runtime";
import type { FastifyInstance } from "fastify";
import { MAX_JSON_DEPTH } from "../json-depth.js";
import { sharedSchemas } from "../schemas/components.js";

/** The document's introduction, with the limits this process actually enforces. */
const description = (limits: DocumentedLimits) =>
  `
Herald sends push notifications to the registered devices of mobile and web apps.
This document is produced by the running gateway from the same JSON Schemas that
validate requests, so it always matches the deployed version.

## Authentication
Every endpoint except \`/healthz\`, \`/readyz\`, \`/metrics\`, \`/openapi.json\` and \`/docs\`
needs \`Authorization: Bearer <token>\`, where the token is an API key (\`hk_live_…\`) or a
session JWT of the admin panel. Keys are scoped to one app or to the whole organization;
an app-scoped key used on another app gets 403. Missing or invalid credentials: 401.

A client key (\`hk_pub_…\`, \`kind: "client"\`) is publishable: it may ship inside an app or a
web page. It is scoped to one app and may only call the operations marked
\`x-herald-client-key\`: register a device, and read, update, opt out, opt in or delete a
device, read its delivery receipts, or fetch and acknowledge its in-app messages, when the request carries that device's
push token, exactly as registered, in the \`X-Herald-Push-Token\` header (a wrong or missing
token: 403). Everything else: 403.

## Roles
A session token acts with its user's role in the organization: viewer (every GET, and a
device's in-app message events), developer (devices, segments, campaigns, sends, imports,
in-app messages, erasing a user), admin (apps, platform configs,
API keys, OAuth clients) or owner (the organization, members, invitations); each role
includes the ones before it. Each operation names the role it needs (\`x-herald-min-role\`);
a weaker role gets 403. API keys have no role and act within their scope, but the
organization, its members, invitations, OAuth clients and \`/v1/me\` are for signed-in
users only (403 for API keys). Accepting an invitation needs no credentials.

## Rate limits
Each key may make \`rate_limit_per_minute\` requests per minute (${limits.rateLimitPerMinute.toLocaleString("en")}
unless the key was created with its own limit; client keys default to a lower limit, 120 unless the operator
changed HERALD_CLIENT_KEY_RATE_LIMIT; session tokens count per user). The window is 60 seconds from
a key's first request and is shared exactly by all gateway replicas. Every authenticated
response, errors included, carries \`X-RateLimit-Limit\`, \`X-RateLimit-Remaining\` and
\`X-RateLimit-Reset\` (Unix seconds); over the limit the answer is 429 with \`Retry-After\`.
If the rate-limit store (Redis) is unreachable, requests are let through uncounted and
the headers show a fresh window: availability is preferred over strict limiting.

## Errors
Errors are \`{"error": "<Name>", "message": "<text>"}\`; validation errors add
\`details: [{"field": "/json/pointer", "message": "…"}]\`. Request bodies must be JSON
(\`application/json\`, at most ${limits.bodyLimitBytes.toLocaleString("en")} bytes, nested at most
${MAX_JSON_DEPTH} levels deep); unknown fields are rejected with 400 so that typos do not go
unnoticed. An id in a path that is not a UUID answers 404, like any unknown id.
Credentials and scope are checked before the body: 401 and 403 come before 413, 415 and 400.
The names, each with one status: ${Object.entries(API_ERRORS)
    .map(([name, e]) => `\`${name}\` ${e.status}`)
    .join(", ")}.

## Lists
Every list answers \`{"data": [...], "page": 1, "per_page": ${PAGING.defaultPerPage}, "total": N}\` and pages the same way:
\`page\` counts from 1 (at most ${PAGING.maxPage.toLocaleString("en")}), \`per_page\` is 1 to ${PAGING.maxPerPage} (default
${PAGING.defaultPerPage}); values out of range answer 400 \`ValidationError\`, they are never clamped.

## Sending
\`POST /v1/push/send\`, \`/send-to-users\`, \`/send-to-segment\` and \`/send-to-devices\` create a
campaign and answer 201 with it. \`contents\` maps ISO 639-1 language codes to a title and
body; each device gets its language's entry or else the \`en\` entry, which is therefore required (422 without it). A send
may carry \`Idempotency-Key\`: a retry with the same key answers 200 with the first campaign and
\`Idempotent-Replayed: true\` instead of sending twice. Cancelling a campaign whose delivery has
started answers 409 \`CampaignNotCancellable\`.

## Conventions
Identifiers are UUIDs; timestamps are ISO 8601 UTC (\`2026-11-21T10:00:00.000Z\`); optional
fields without a value are \`null\`.
`.trim();

export interface DocumentedLimits {
  rateLimitPerMinute: number;
  bodyLimitBytes: number;
}

const COMPONENT_REF = /^#\/components\/schemas\/([^/]+)$/;

interface SchemaNode {
  properties?: Record<string, { const?: unknown; enum?: unknown[] }>;
  discriminator?: { propertyName: string; mapping?: Record<string, string> };
  oneOf?: { $ref?: string }[];
}
interface Document {
  paths?: unknown;
  components?: { schemas?: Record<string, SchemaNode> };
}

/** The tag value a component branch stands for: its const (or only enum value). */
function tagValue(component: SchemaNode | undefined, property: string): string | undefined {
  const tag = component?.properties?.[property];
  const value = tag?.const ?? tag?.enum?.[0];
  return typeof value === "string" ? value : undefined;
}

/**
 * Adds the explicit `mapping` to discriminators whose oneOf branches are components:
 * OpenAPI would otherwise take the tag value for the component name. The route schemas
 * cannot carry it themselves, because ajv refuses `mapping`.
 */
export function addDiscriminatorMappings<D extends object>(doc: D): D {
  const { paths, components: { schemas: components = {} } = {} } = doc as Document;
  const visit = (node: unknown): void => {
    if (!node || typeof node !== "object") return;
    const schema = node as SchemaNode;
    if (schema.discriminator && !schema.discriminator.mapping && schema.oneOf) {
      const mapping: Record<string, string> = {};
      for (const { $ref } of schema.oneOf) {
        const name = $ref ? COMPONENT_REF.exec($ref)?.[1] : undefined;
        const value = name ? tagValue(components[name], schema.discriminator.propertyName) : undefined;
        if (value && $ref) mapping[value] = $ref;
      }
      if (Object.keys(mapping).length === schema.oneOf.length) schema.discriminator.mapping = mapping;
    }
    Object.values(node).forEach(visit);
  };
  visit(paths);
  return doc;
}

/** Swagger UI gets everything from this server: the policy makes any CDN reference fail loudly. */
const DOCS_CSP =
  "default-src 'self'; base-uri 'self'; connect-src 'self'; font-src 'self' data:; frame-ancestors 'self'; " +
  "img-src 'self' data:; object-src 'none'; script-src 'self'; script-src-attr 'none'; style-src 'self' 'unsafe-inline'; " +
  "form-action 'self'";

/**
 * OpenAPI 3.1 built from the route schemas, at GET /openapi.json, and the interactive
 * reference at /docs, served fully offline from the bundled Swagger UI assets.
 * Register before the routes: @fastify/swagger collects them as they are added.
 */
export async function registerOpenApi(app: FastifyInstance, version: string, limits: DocumentedLimits): Promise<void> {
  for (const schema of sharedSchemas) app.addSchema(schema);
  await app.register(swagger, {
    openapi: {
      openapi: "3.1.0",
      info: {
        title: "Herald API",
        version,
        description: description(limits),
        license: { name: "Apache-2.0", identifier: "Apache-2.0" },
      },
      servers: [{ url: "/", description: "This server" }],
      tags: [
        { name: "Apps", description: "Apps of the organization." },
        { name: "Platform configs", description: "Per-app push credentials (APNs, FCM, VAPID)." },
        { name: "API keys", description: "Keys that authenticate server-to-server calls and client libraries." },
        { name: "Devices", description: "Registered devices, opt-out and opt-in." },
        { name: "Push", description: "Send notifications: each send creates a campaign." },
        {
          name: "Campaigns",
          description:
            "Sent and scheduled campaigns, their delivery statistics and per-device receipts (list, export), cancellation.",
        },
        { name: "Segments", description: "Named audience rules of an app, targeted by send-to-segment." },
        {
          name: "Android channels",
          description: "Android notification channels of an app, synced by the client libraries, named by sends.",
        },
        {
          name: "In-app messages",
          description:
            "Messages an app shows inside itself, fetched by each device, with impression and click counters.",
        },
        {
          name: "Webhooks",
          description:
            "HTTPS endpoints that receive the app's events, signed per Standard Webhooks (webhook-id, " +
            "webhook-timestamp, webhook-signature), with retries, rotation and replay.",
        },
        { name: "Users", description: "Your users in an app, by external id: erasure of their devices and records." },
        { name: "Organization", description: "The organization and the signed-in user (sessions only)." },
        { name: "Members", description: "Members with their roles, and invitations by link (sessions only)." },
        { name: "OAuth clients", description: "The organization's own OAuth clients (sessions only)." },
        { name: "Operations", description: "Health, readiness and metrics; no authentication." },
      ],
      components: {
        securitySchemes: {
          bearer: {
            type: "http",
            scheme: "bearer",
            description:
              "An API key (`hk_live_` followed by 32+ letters and digits), or a session JWT of the admin panel " +
              "(claims `org_id`, optional `app_id`, `sub`).",
          },
        },
      },
      security: [{ bearer: [] }],
    },
    transformObject: (documents) =>
      "openapiObject" in documents ? addDiscriminatorMappings(documents.openapiObject) : documents.swaggerObject,
    refResolver: {
      buildLocalReference: (json, _baseUri, _fragment, i) => (typeof json.$id === "string" ? json.$id : `def-${i}`),
    },
  });
  await app.register(swaggerUi, {
    routePrefix: "/docs",
    staticCSP: DOCS_CSP,
    theme: { title: "Herald API reference" },
    uiConfig: { deepLinking: true, displayOperationId: true },
  });
  app.get("/openapi.json", { schema: { hide: true } }, async () => app.swagger());
}
