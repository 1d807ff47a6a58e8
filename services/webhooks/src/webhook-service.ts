import { randomUUID } from "node:crypto";
import type { MessageInitShape } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import type {
  CreateWebhookRequest,
  DeleteWebhookRequest,
  GetWebhookRequest,
  ListWebhookAttemptsRequest,
  ListWebhooksRequest,
  ReplayWebhookEventRequest,
  RotateWebhookSecretRequest,
  TestWebhookRequest,
  UpdateWebhookRequest,
  WebhookAttemptSchema,
  WebhookSchema,
  WebhookService,
} from "@herald/proto/webhook";
import {
  checkPushEndpoint,
  EVENT_ID,
  isWebhookEventType,
  type WebhookEventInput,
  invalidArgument,
  isUuid,
  notFound,
  pageOf,
  type Resolver,
  type SealedBox,
  toTimestamp,
} from "@herald/runtime";
import { newSecret } from "./signature.js";
import type { DeliveryRow, EndpointChanges, EndpointRow, PgWebhookStore } from "./webhook-store.js";

/** How long the previous secret keeps signing after a rotation. */
export const ROTATION_OVERLAP_MS = 24 * 3600 * 1000;
const URL_MAX = 2048;
const DESCRIPTION_MAX = 1000;
const CONTROL = /\p{Cc}/u;

const aad = (endpointId: string) => `webhook:${endpointId}`;

export const sealSecret = (box: SealedBox, endpointId: string, secret: string): Buffer =>
  box.seal(secret, aad(endpointId));

export const openSecret = (box: SealedBox, endpointId: string, sealed: Buffer, version: number): string =>
  box.open(sealed, aad(endpointId), version);

export function toWebhook(row: EndpointRow): MessageInitShape<typeof WebhookSchema> {
  const overlap = row.previous_secret_expires_at && row.previous_secret_expires_at.getTime() > Date.now();
  return {
    id: row.id,
    appId: row.app_id,
    url: row.url,
    events: row.events,
    description: row.description,
    enabled: row.enabled,
    disabledReason: row.disabled_reason ?? undefined,
    createdAt: toTimestamp(row.created_at),
    updatedAt: toTimestamp(row.updated_at),
    previousSecretExpiresAt: overlap ? toTimestamp(row.previous_secret_expires_at!) : undefined,
  };
}

export function toAttempt(row: DeliveryRow): MessageInitShape<typeof WebhookAttemptSchema> {
  return {
    eventId: row.event_id,
    eventType: row.event_type,
    status: row.status,
    attempts: row.attempts,
    nextAttemptAt: row.next_attempt_at ? toTimestamp(row.next_attempt_at) : undefined,
    lastError: row.last_error ?? undefined,
    responseStatus: row.response_status ?? undefined,
    responseBody: row.response_body ?? undefined,
    createdAt: toTimestamp(row.created_at),
    deliveredAt: row.delivered_at ? toTimestamp(row.delivered_at) : undefined,
  };
}

export interface WebhookServiceDeps {
  store: PgWebhookStore;
  box: SealedBox;
  allowPrivate: boolean;
  resolve?: Resolver;
  publish: (event: WebhookEventInput) => Promise<void>;
}

function appIdOf(appId: string): string {
  if (!isUuid(appId)) throw invalidArgument("app_id must be a UUID");
  return appId;
}

function eventsOf(events: readonly string[]): string[] {
  if (events.length === 0) throw invalidArgument("events must name at least one event type");
  const unknown = events.find((e) => !isWebhookEventType(e));
  if (unknown !== undefined) throw invalidArgument(`events: unknown event type "${unknown.slice(0, 64)}"`);
  return [...new Set(events)];
}

function descriptionOf(d: string): string {
  if ([...d].length > DESCRIPTION_MAX || CONTROL.test(d.replace(/[\n\t]/g, ""))) {
    throw invalidArgument(`description must be at most ${DESCRIPTION_MAX} characters without control characters`);
  }
  return d;
}

/** Endpoints of apps; the secrets are sealed before they are stored and never logged. */
export class WebhookServiceImpl implements ServiceImpl<typeof WebhookService> {
  constructor(private readonly d: WebhookServiceDeps) {}

  private async urlOf(url: string): Promise<string> {
    if (url.length > URL_MAX) throw invalidArgument(`url must be at most ${URL_MAX} characters`);
    const check = await checkPushEndpoint(url, { allowPrivate: this.d.allowPrivate }, this.d.resolve);
    if (!check.ok) throw invalidArgument(`url ${check.reason}`);
    return new URL(url).href;
  }

  async createWebhook(req: CreateWebhookRequest) {
    const appId = appIdOf(req.appId);
    const url = await this.urlOf(req.url);
    const events = eventsOf(req.events);
    const description = descriptionOf(req.description);
    const id = randomUUID();
    const secret = newSecret();
    const row = await this.d.store.create({
      id,
      appId,
      url,
      events,
      description,
      enabled: req.enabled ?? true,
      secretSealed: sealSecret(this.d.box, id, secret),
      secretKeyVersion: this.d.box.keyVersion,
    });
    return { webhook: toWebhook(row), secret };
  }

  async getWebhook(req: GetWebhookRequest) {
    return { webhook: toWebhook(await this.find(req.appId, req.id)) };
  }

  async listWebhooks(req: ListWebhooksRequest) {
    const page = pageOf(req.page);
    const { rows, total } = await this.d.store.list(appIdOf(req.appId), page.perPage, page.offset);
    return { webhooks: rows.map(toWebhook), page: { page: page.page, perPage: page.perPage, total: BigInt(total) } };
  }

  async updateWebhook(req: UpdateWebhookRequest) {
    const appId = appIdOf(req.appId);
    const changes: EndpointChanges = {};
    if (req.url !== undefined) changes.url = await this.urlOf(req.url);
    if (req.updateEvents) changes.events = eventsOf(req.events);
    if (req.description !== undefined) changes.description = descriptionOf(req.description);
    if (req.enabled !== undefined) changes.enabled = req.enabled;
    const row = isUuid(req.id) ? await this.d.store.update(appId, req.id, changes) : undefined;
    if (!row) throw notFound("webhook not found");
    return { webhook: toWebhook(row) };
  }

  async deleteWebhook(req: DeleteWebhookRequest) {
    const appId = appIdOf(req.appId);
    if (!isUuid(req.id) || !(await this.d.store.delete(appId, req.id))) throw notFound("webhook not found");
    return {};
  }

  async rotateWebhookSecret(req: RotateWebhookSecretRequest) {
    const appId = appIdOf(req.appId);
    if (!isUuid(req.id)) throw notFound("webhook not found");
    const secret = newSecret();
    const row = await this.d.store.rotate(
      appId,
      req.id,
      sealSecret(this.d.box, req.id, secret),
      this.d.box.keyVersion,
      ROTATION_OVERLAP_MS,
    );
    if (!row) throw notFound("webhook not found");
    return { webhook: toWebhook(row), secret };
  }

  async testWebhook(req: TestWebhookRequest) {
    const row = await this.find(req.appId, req.id);
    const eventId = `evt_${randomUUID().replace(/-/g, "")}`;
    await this.d.publish({
      id: eventId,
      type: "webhook.test",
      appId: row.app_id,
      timestamp: new Date(),
      data: { webhook_id: row.id },
      endpointId: row.id,
    });
    return { eventId };
  }

  async listWebhookAttempts(req: ListWebhookAttemptsRequest) {
    const row = await this.find(req.appId, req.id);
    const page = pageOf(req.page);
    const { rows, total } = await this.d.store.listDeliveries(row.id, page.perPage, page.offset);
    return { attempts: rows.map(toAttempt), page: { page: page.page, perPage: page.perPage, total: BigInt(total) } };
  }

  async replayWebhookEvent(req: ReplayWebhookEventRequest) {
    const row = await this.find(req.appId, req.id);
    const attempt = EVENT_ID.test(req.eventId) ? await this.d.store.replay(row.app_id, row.id, req.eventId) : undefined;
    if (!attempt) throw notFound("event not found");
    return { attempt: toAttempt(attempt) };
  }

  private async find(appId: string, id: string): Promise<EndpointRow> {
    const row = isUuid(id) ? await this.d.store.get(appIdOf(appId), id) : undefined;
    if (!row) throw notFound("webhook not found");
    return row;
  }
}
