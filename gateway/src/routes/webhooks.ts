import type { Webhook, WebhookAttempt } from "@herald/proto/webhook";
import type { FastifyInstance } from "fastify";
import { appInPath } from "../early-authorization.js";
import { principalOf } from "../plugins/auth.js";
import {
  createWebhookSchema,
  deleteWebhookSchema,
  getWebhookSchema,
  listWebhookAttemptsSchema,
  listWebhooksSchema,
  replayWebhookEventSchema,
  rotateWebhookSecretSchema,
  testWebhookSchema,
  updateWebhookSchema,
} from "../schemas/webhooks.js";
import { iso, listView, type PageQuery } from "../views.js";
import type { RouteDeps } from "./deps.js";

interface AppParams {
  app_id: string;
}
interface WebhookParams extends AppParams {
  webhook_id: string;
}
interface WebhookBody {
  url?: string;
  events?: string[];
  description?: string;
  enabled?: boolean;
}

export interface WebhookJson {
  id: string;
  app_id: string;
  url: string;
  events: string[];
  description: string;
  enabled: boolean;
  disabled_reason: string | null;
  previous_secret_expires_at: string | null;
  created_at: string;
  updated_at: string;
}

export function webhookView(w: Webhook): WebhookJson {
  return {
    id: w.id,
    app_id: w.appId,
    url: w.url,
    events: w.events,
    description: w.description,
    enabled: w.enabled,
    disabled_reason: w.disabledReason ?? null,
    previous_secret_expires_at: w.previousSecretExpiresAt ? iso(w.previousSecretExpiresAt) : null,
    created_at: iso(w.createdAt),
    updated_at: iso(w.updatedAt),
  };
}

export function webhookAttemptView(a: WebhookAttempt) {
  return {
    event_id: a.eventId,
    event_type: a.eventType,
    status: a.status,
    attempts: a.attempts,
    next_attempt_at: a.nextAttemptAt ? iso(a.nextAttemptAt) : null,
    last_error: a.lastError ?? null,
    response_status: a.responseStatus ?? null,
    response_body: a.responseBody ?? null,
    created_at: iso(a.createdAt),
    delivered_at: a.deliveredAt ? iso(a.deliveredAt) : null,
  };
}

function present<T>(value: T | undefined, rpc: string): T {
  if (!value) throw new Error(`${rpc} answered without a result`);
  return value;
}

/**
 * Webhook endpoints of an app. Server keys and developers (and above) change them, viewers
 * read them; client keys may not touch them (no clientKey declaration).
 */
export function registerWebhookRoutes(scope: FastifyInstance, deps: RouteDeps): void {
  const { webhooks, apps } = deps;
  const byApp = appInPath(apps);
  const write = { minRole: "developer", authorize: byApp } as const;
  const read = { minRole: "viewer", authorize: byApp } as const;

  scope.post<{ Params: AppParams; Body: WebhookBody & { url: string; events: string[] } }>(
    "/apps/:app_id/webhooks",
    { schema: createWebhookSchema, config: write },
    async (request, reply) => {
      const app = await apps.authorized(principalOf(request), request.params.app_id);
      const { url, events, description, enabled } = request.body;
      const res = await webhooks.createWebhook({ appId: app.id, url, events, description: description ?? "", enabled });
      return reply.code(201).send({ ...webhookView(present(res.webhook, "CreateWebhook")), secret: res.secret });
    },
  );

  scope.get<{ Params: AppParams; Querystring: PageQuery }>(
    "/apps/:app_id/webhooks",
    { schema: listWebhooksSchema, config: read },
    async (request) => {
      const app = await apps.authorized(principalOf(request), request.params.app_id);
      const q = request.query;
      const res = await webhooks.listWebhooks({ appId: app.id, page: { page: q.page, perPage: q.per_page } });
      return listView(res.webhooks.map(webhookView), res.page, q);
    },
  );

  scope.get<{ Params: WebhookParams }>(
    "/apps/:app_id/webhooks/:webhook_id",
    { schema: getWebhookSchema, config: read },
    async (request) => {
      const app = await apps.authorized(principalOf(request), request.params.app_id);
      const res = await webhooks.getWebhook({ appId: app.id, id: request.params.webhook_id });
      return webhookView(present(res.webhook, "GetWebhook"));
    },
  );

  scope.patch<{ Params: WebhookParams; Body: WebhookBody }>(
    "/apps/:app_id/webhooks/:webhook_id",
    { schema: updateWebhookSchema, config: write },
    async (request) => {
      const app = await apps.authorized(principalOf(request), request.params.app_id);
      const { url, events, description, enabled } = request.body;
      const res = await webhooks.updateWebhook({
        appId: app.id,
        id: request.params.webhook_id,
        url,
        events: events ?? [],
        updateEvents: events !== undefined,
        description,
        enabled,
      });
      return webhookView(present(res.webhook, "UpdateWebhook"));
    },
  );

  scope.delete<{ Params: WebhookParams }>(
    "/apps/:app_id/webhooks/:webhook_id",
    { schema: deleteWebhookSchema, config: write },
    async (request, reply) => {
      const app = await apps.authorized(principalOf(request), request.params.app_id);
      await webhooks.deleteWebhook({ appId: app.id, id: request.params.webhook_id });
      return reply.code(204).send();
    },
  );

  scope.post<{ Params: WebhookParams }>(
    "/apps/:app_id/webhooks/:webhook_id/rotate-secret",
    { schema: rotateWebhookSecretSchema, config: write },
    async (request) => {
      const app = await apps.authorized(principalOf(request), request.params.app_id);
      const res = await webhooks.rotateWebhookSecret({ appId: app.id, id: request.params.webhook_id });
      return { ...webhookView(present(res.webhook, "RotateWebhookSecret")), secret: res.secret };
    },
  );

  scope.post<{ Params: WebhookParams }>(
    "/apps/:app_id/webhooks/:webhook_id/test",
    { schema: testWebhookSchema, config: write },
    async (request, reply) => {
      const app = await apps.authorized(principalOf(request), request.params.app_id);
      const res = await webhooks.testWebhook({ appId: app.id, id: request.params.webhook_id });
      return reply.code(202).send({ event_id: res.eventId });
    },
  );

  scope.get<{ Params: WebhookParams; Querystring: PageQuery }>(
    "/apps/:app_id/webhooks/:webhook_id/attempts",
    { schema: listWebhookAttemptsSchema, config: read },
    async (request) => {
      const app = await apps.authorized(principalOf(request), request.params.app_id);
      const q = request.query;
      const res = await webhooks.listWebhookAttempts({
        appId: app.id,
        id: request.params.webhook_id,
        page: { page: q.page, perPage: q.per_page },
      });
      return listView(res.attempts.map(webhookAttemptView), res.page, q);
    },
  );

  scope.post<{ Params: WebhookParams & { event_id: string } }>(
    "/apps/:app_id/webhooks/:webhook_id/events/:event_id/replay",
    { schema: replayWebhookEventSchema, config: write },
    async (request, reply) => {
      const app = await apps.authorized(principalOf(request), request.params.app_id);
      const res = await webhooks.replayWebhookEvent({
        appId: app.id,
        id: request.params.webhook_id,
        eventId: request.params.event_id,
      });
      return reply.code(202).send(webhookAttemptView(present(res.attempt, "ReplayWebhookEvent")));
    },
  );
}
