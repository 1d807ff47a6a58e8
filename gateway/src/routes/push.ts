import type { MessageInitShape } from "@bufbuild/protobuf";
import { Priority, type CreateCampaignRequestSchema } from "@herald/proto/campaign";
import { toTimestamp } from "@herald/runtime";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { campaignView, priorityFromName, type PriorityName } from "../campaign-views.js";
import { badRequest, conflict } from "../http-errors.js";
import { principalOf } from "../plugins/auth.js";
import { sendSchema, sendToDevicesSchema, sendToSegmentSchema, sendToUsersSchema } from "../schemas/push.js";
import type { RouteDeps } from "./deps.js";
import { appInBody } from "../early-authorization.js";

export interface SendBody {
  app_id: string;
  name: string;
  contents: Record<string, { title?: string; body?: string }>;
  data?: Record<string, unknown>;
  scheduled_at?: string;
  ttl?: number;
  priority?: PriorityName;
  collapse_id?: string;
  image_url?: string;
  sound?: string;
  badge?: number;
  badge_increment?: number;
  thread_id?: string;
  content_available?: boolean;
  mutable_content?: boolean;
  icon?: string;
  web_badge?: string;
  actions?: { action: string; title: string; icon?: string }[];
  android_channel_id?: string;
}

export type SendTarget =
  | { type: "all" }
  | { type: "users"; external_ids: string[] }
  | { type: "segment"; segment_id: string }
  | { type: "devices"; device_ids: string[] };

export interface Idempotency {
  key: string;
  /** Whose keys these are: one caller's key never replays another caller's send. */
  scope: string;
}

type CreateCampaignInit = MessageInitShape<typeof CreateCampaignRequestSchema>;

function targetMessage(target: SendTarget): CreateCampaignInit["target"] {
  switch (target.type) {
    case "all":
      return { target: { case: "all", value: {} } };
    case "users":
      return { target: { case: "externalIds", value: { externalIds: target.external_ids } } };
    case "segment":
      return { target: { case: "segment", value: { segmentId: target.segment_id } } };
    case "devices":
      return { target: { case: "deviceIds", value: { deviceIds: target.device_ids } } };
  }
}

/** The send's presentation options as the campaign service takes them (docs/providers.md). */
function notificationOptions(body: SendBody): NonNullable<CreateCampaignInit["options"]>["notification"] {
  return {
    sound: body.sound,
    badge: body.badge,
    badgeIncrement: body.badge_increment,
    threadId: body.thread_id,
    contentAvailable: body.content_available ?? false,
    mutableContent: body.mutable_content ?? false,
    webIconUrl: body.icon,
    webBadgeUrl: body.web_badge,
    webActions: (body.actions ?? []).map((a) => ({ action: a.action, title: a.title, iconUrl: a.icon })),
    androidChannelId: body.android_channel_id,
  };
}

/** A validated send body → CreateCampaign; what the body leaves out, the service defaults. */
export function toCreateCampaignRequest(
  body: SendBody,
  target: SendTarget,
  idempotency?: Idempotency,
): CreateCampaignInit {
  const contents: Record<string, { title: string; body: string }> = {};
  for (const [lang, content] of Object.entries(body.contents)) {
    contents[lang] = { title: content.title ?? "", body: content.body ?? "" };
  }
  const req: CreateCampaignInit = {
    appId: body.app_id,
    name: body.name,
    contents,
    dataJson: body.data === undefined ? "" : JSON.stringify(body.data),
    target: targetMessage(target),
    options: {
      ttlSeconds: body.ttl ?? 0,
      priority: body.priority === undefined ? Priority.UNSPECIFIED : priorityFromName(body.priority),
      collapseId: body.collapse_id,
      imageUrl: body.image_url,
      notification: notificationOptions(body),
    },
  };
  if (body.scheduled_at !== undefined) {
    // The date-time format admits a leap second (…:60), which no clock here can represent.
    const at = new Date(body.scheduled_at);
    if (Number.isNaN(at.getTime())) {
      throw badRequest("invalid request body: /scheduled_at is not a representable time", [
        { field: "/scheduled_at", message: "is not a representable time" },
      ]);
    }
    req.scheduledAt = toTimestamp(at);
  }
  if (idempotency) {
    req.idempotencyKey = idempotency.key;
    req.idempotencyScope = idempotency.scope;
  }
  return req;
}

export function registerPushRoutes(scope: FastifyInstance, deps: RouteDeps): void {
  const { campaigns, apps } = deps;

  /** 201 with a new campaign; 200 and Idempotent-Replayed for the answer to an earlier request. */
  async function send(request: FastifyRequest, reply: FastifyReply, body: SendBody, target: SendTarget) {
    const principal = principalOf(request);
    const app = await apps.authorized(principal, body.app_id);
    // Validated by the route schema: one printable string when present.
    const key = request.headers["idempotency-key"] as string | undefined;
    // The rate-limit identity, `key:<key id>` or `jwt:<sub>`: unique per caller, never shared.
    const idempotency = key === undefined ? undefined : { key, scope: principal.identity };
    const res = await campaigns.createCampaign(
      toCreateCampaignRequest({ ...body, app_id: app.id }, target, idempotency),
    );
    const campaign = res.campaign;
    if (!campaign) throw new Error("CreateCampaign answered without a campaign");
    if (res.created) return reply.code(201).send(campaignView(campaign));
    if (campaign.appId.toLowerCase() !== app.id.toLowerCase()) {
      throw conflict("this Idempotency-Key was already used for a send to another app; use a new key");
    }
    return reply.code(200).header("idempotent-replayed", "true").send(campaignView(campaign));
  }

  scope.post<{ Body: SendBody }>(
    "/push/send",
    { schema: sendSchema, config: { minRole: "developer", authorizeBody: appInBody(deps.apps) } },
    async (request, reply) => send(request, reply, request.body, { type: "all" }),
  );

  scope.post<{ Body: SendBody & { external_ids: string[] } }>(
    "/push/send-to-users",
    { schema: sendToUsersSchema, config: { minRole: "developer", authorizeBody: appInBody(deps.apps) } },
    async (request, reply) => {
      const { external_ids, ...body } = request.body;
      return send(request, reply, body, { type: "users", external_ids });
    },
  );

  scope.post<{ Body: SendBody & { segment_id: string } }>(
    "/push/send-to-segment",
    { schema: sendToSegmentSchema, config: { minRole: "developer", authorizeBody: appInBody(deps.apps) } },
    async (request, reply) => {
      const { segment_id, ...body } = request.body;
      return send(request, reply, body, { type: "segment", segment_id });
    },
  );

  scope.post<{ Body: SendBody & { device_ids: string[] } }>(
    "/push/send-to-devices",
    { schema: sendToDevicesSchema, config: { minRole: "developer", authorizeBody: appInBody(deps.apps) } },
    async (request, reply) => {
      const { device_ids, ...body } = request.body;
      return send(request, reply, body, { type: "devices", device_ids });
    },
  );
}
