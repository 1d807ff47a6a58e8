import type { Campaign } from "@herald/proto/campaign";
import type { FastifyInstance, FastifyRequest } from "fastify";
import { listAppId } from "../authorize.js";
import { campaignStatsView, campaignStatusFromName, campaignView, type CampaignStatusName } from "../campaign-views.js";
import { principalOf } from "../plugins/auth.js";
import {
  cancelCampaignSchema,
  getCampaignSchema,
  getCampaignStatsSchema,
  listCampaignsSchema,
} from "../schemas/campaigns.js";
import { listView, type PageQuery } from "../views.js";
import type { RouteDeps } from "./deps.js";
import { appInQuery, type Authorize, perRequest } from "../early-authorization.js";

interface CampaignParams {
  id: string;
}

const present = (campaign: Campaign | undefined, rpc: string): Campaign => {
  if (!campaign) throw new Error(`${rpc} answered without a campaign`);
  return campaign;
};

/**
 * The campaign `/v1/campaigns/{id}…` names, if the caller may see its app: 404 when
 * unknown, 403 when not theirs. Once per request: the early check
 * (early-authorization.ts) and the handler share it.
 */
export function authorizedCampaign(
  { campaigns, apps }: Pick<RouteDeps, "campaigns" | "apps">,
  request: FastifyRequest,
): Promise<Campaign> {
  return perRequest(request, "campaign", async () => {
    const { campaign } = await campaigns.getCampaign({ id: (request.params as CampaignParams).id });
    const found = present(campaign, "GetCampaign");
    await apps.authorized(principalOf(request), found.appId);
    return found;
  });
}

export function registerCampaignRoutes(scope: FastifyInstance, deps: RouteDeps): void {
  const { campaigns, apps } = deps;
  const byCampaign: Authorize = (request) => authorizedCampaign(deps, request);

  scope.get<{ Querystring: PageQuery & { app_id?: string; status?: CampaignStatusName } }>(
    "/campaigns",
    { schema: listCampaignsSchema, config: { minRole: "viewer", authorize: appInQuery(apps) } },
    async (request) => {
      const principal = principalOf(request);
      const q = request.query;
      const app = await apps.authorized(principal, listAppId(principal, q.app_id));
      const res = await campaigns.listCampaigns({
        appId: app.id,
        page: { page: q.page, perPage: q.per_page },
        status: q.status === undefined ? undefined : campaignStatusFromName(q.status),
      });
      return listView(res.campaigns.map(campaignView), res.page, q);
    },
  );

  scope.get<{ Params: CampaignParams }>(
    "/campaigns/:id",
    { schema: getCampaignSchema, config: { minRole: "viewer", authorize: byCampaign } },
    async (request) => campaignView(await authorizedCampaign(deps, request)),
  );

  // The campaign already carries its counters: one call answers both questions.
  scope.get<{ Params: CampaignParams }>(
    "/campaigns/:id/stats",
    { schema: getCampaignStatsSchema, config: { minRole: "viewer", authorize: byCampaign } },
    async (request) => {
      const campaign = await authorizedCampaign(deps, request);
      return campaignStatsView(campaign.id, campaign.stats);
    },
  );

  scope.post<{ Params: CampaignParams }>(
    "/campaigns/:id/cancel",
    { schema: cancelCampaignSchema, config: { minRole: "developer", authorize: byCampaign } },
    async (request) => {
      const current = await authorizedCampaign(deps, request);
      const { campaign } = await campaigns.cancelCampaign({ id: current.id });
      return campaignView(present(campaign, "CancelCampaign"));
    },
  );
}
