import type { MessageInitShape } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import type { Segment, SegmentRuleSchema } from "@herald/proto/device";
import type { FastifyInstance, FastifyRequest } from "fastify";
import { listAppId } from "../authorize.js";
import { segmentView, type SegmentRuleJson } from "../campaign-views.js";
import { badRequest } from "../http-errors.js";
import { principalOf } from "../plugins/auth.js";
import {
  createSegmentSchema,
  deleteSegmentSchema,
  getSegmentSchema,
  listSegmentsSchema,
  previewSegmentSchema,
  updateSegmentSchema,
} from "../schemas/segments.js";
import { listView, platformFromName, type PageQuery } from "../views.js";
import type { RouteDeps } from "./deps.js";
import { appInBody, appInQuery, type Authorize, perRequest } from "../early-authorization.js";

interface SegmentParams {
  id: string;
}
interface CreateBody {
  app_id: string;
  name: string;
  rule: SegmentRuleJson;
}
interface UpdateBody {
  name?: string;
  rule?: SegmentRuleJson;
}
interface PreviewBody {
  app_id: string;
  rule: SegmentRuleJson;
}

/** The registry names an inline rule "segment" (AudienceFilter.segment); the body calls it "rule". */
function inlineRuleError(err: unknown): unknown {
  if (!(err instanceof ConnectError) || err.code !== Code.InvalidArgument) return err;
  return badRequest(err.rawMessage.replace(/^segment\./, "rule."));
}

/** REST rule → the registry's message; parts left out are empty lists, i.e. no restriction. */
export function toSegmentRule(rule: SegmentRuleJson): MessageInitShape<typeof SegmentRuleSchema> {
  return {
    tagsAny: rule.tags_any ?? [],
    tagsAll: rule.tags_all ?? [],
    tagsNone: rule.tags_none ?? [],
    platforms: (rule.platforms ?? []).map(platformFromName),
    languages: rule.languages ?? [],
    appVersions: rule.app_versions ?? [],
    timezones: rule.timezones ?? [],
    hasExternalId: rule.has_external_id,
  };
}

const present = (segment: Segment | undefined, rpc: string): Segment => {
  if (!segment) throw new Error(`${rpc} answered without a segment`);
  return segment;
};

export function registerSegmentRoutes(scope: FastifyInstance, deps: RouteDeps): void {
  const { devices, apps } = deps;

  /** The segment if the caller may touch its app: 404 when unknown, 403 when not theirs. */
  function authorizedSegment(request: FastifyRequest<{ Params: SegmentParams }>): Promise<Segment> {
    // Once per request: the early check (early-authorization.ts) and the handler share it.
    return perRequest(request, "segment", async () => {
      const { segment } = await devices.getSegment({ id: request.params.id });
      const found = present(segment, "GetSegment");
      await apps.authorized(principalOf(request), found.appId);
      return found;
    });
  }
  const bySegment: Authorize = (request) => authorizedSegment(request as FastifyRequest<{ Params: SegmentParams }>);

  scope.post<{ Body: CreateBody }>(
    "/segments",
    { schema: createSegmentSchema, config: { minRole: "developer", authorizeBody: appInBody(apps) } },
    async (request, reply) => {
      const body = request.body;
      const app = await apps.authorized(principalOf(request), body.app_id);
      const { segment } = await devices.createSegment({
        appId: app.id,
        name: body.name,
        rule: toSegmentRule(body.rule),
      });
      return reply.code(201).send(segmentView(present(segment, "CreateSegment")));
    },
  );

  // A read that needs a body: viewers may use it, and nothing is stored.
  scope.post<{ Body: PreviewBody }>(
    "/segments/preview",
    { schema: previewSegmentSchema, config: { minRole: "viewer", authorizeBody: appInBody(apps) } },
    async (request) => {
      const body = request.body;
      const app = await apps.authorized(principalOf(request), body.app_id);
      try {
        const { count } = await devices.countAudience({
          appId: app.id,
          filter: { target: { case: "segment", value: toSegmentRule(body.rule) } },
        });
        return { count: Number(count) };
      } catch (err) {
        throw inlineRuleError(err);
      }
    },
  );

  scope.get<{ Querystring: PageQuery & { app_id?: string } }>(
    "/segments",
    { schema: listSegmentsSchema, config: { minRole: "viewer", authorize: appInQuery(apps) } },
    async (request) => {
      const principal = principalOf(request);
      const q = request.query;
      const app = await apps.authorized(principal, listAppId(principal, q.app_id));
      const res = await devices.listSegments({ appId: app.id, page: { page: q.page, perPage: q.per_page } });
      return listView(res.segments.map(segmentView), res.page, q);
    },
  );

  scope.get<{ Params: SegmentParams }>(
    "/segments/:id",
    { schema: getSegmentSchema, config: { minRole: "viewer", authorize: bySegment } },
    async (request) => segmentView(await authorizedSegment(request)),
  );

  scope.put<{ Params: SegmentParams; Body: UpdateBody }>(
    "/segments/:id",
    { schema: updateSegmentSchema, config: { minRole: "developer", authorize: bySegment } },
    async (request) => {
      const current = await authorizedSegment(request);
      const body = request.body;
      const { segment } = await devices.updateSegment({
        id: current.id,
        name: body.name,
        rule: body.rule === undefined ? undefined : toSegmentRule(body.rule),
      });
      return segmentView(present(segment, "UpdateSegment"));
    },
  );

  scope.delete<{ Params: SegmentParams }>(
    "/segments/:id",
    { schema: deleteSegmentSchema, config: { minRole: "developer", authorize: bySegment } },
    async (request, reply) => {
      const current = await authorizedSegment(request);
      await devices.deleteSegment({ id: current.id });
      return reply.code(204).send();
    },
  );
}
