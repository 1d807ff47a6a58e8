import type { FastifyInstance } from "fastify";
import { authorizedDevice } from "../device-access.js";
import {
  chunkText,
  exportStream,
  exportText,
  EXPORT_CONTENT_TYPES,
  type ExportFormat,
  startedIterable,
} from "../delivery-export.js";
import {
  chunkColumns,
  columnView,
  deliveryView,
  deviceDeliveryView,
  lookUpDevices,
  type OutcomeName,
  outcomeFromName,
} from "../delivery-views.js";
import { appInPath, type Authorize } from "../early-authorization.js";
import { principalOf } from "../plugins/auth.js";
import {
  eraseUserSchema,
  exportCampaignDeliveriesSchema,
  listCampaignDeliveriesSchema,
  listDeviceDeliveriesSchema,
} from "../schemas/deliveries.js";
import { listView, type PageQuery, platformFromName, type PlatformName } from "../views.js";
import { PAGING, readAhead } from "@herald/runtime";
import { authorizedCampaign } from "./campaigns.js";
import type { RouteDeps } from "./deps.js";

interface IdParams {
  id: string;
}
interface Filters {
  outcome?: OutcomeName;
  platform?: PlatformName;
}

/**
 * Export chunks (1,000 receipts each) read and looked up ahead of the one being written:
 * enough to keep the campaign service, the registry and the socket busy at once.
 */
const EXPORT_READ_AHEAD = 2;

/** Device ids per EraseDeviceRecords call. */
const ERASE_CHUNK = 1_000;

const filterRequest = (q: Filters) => ({
  outcome: outcomeFromName(q.outcome),
  platform: q.platform === undefined ? undefined : platformFromName(q.platform),
});

/**
 * What happened to each device's notification: a campaign's receipts (paged, and exported
 * as a stream), a device's receipts, and the erasure of a user's devices and records.
 * Receipts are read from the campaign service and joined with the registry's external ids,
 * one LookupDevices call per page or export chunk.
 */
export function registerDeliveryRoutes(scope: FastifyInstance, deps: RouteDeps): void {
  const { campaigns, devices, apps } = deps;
  const byCampaign: Authorize = (request) => authorizedCampaign(deps, request);
  const byDevice: Authorize = (request) => authorizedDevice(deps, request, (request.params as IdParams).id);

  scope.get<{ Params: IdParams; Querystring: PageQuery & Filters }>(
    "/campaigns/:id/deliveries",
    { schema: listCampaignDeliveriesSchema, config: { minRole: "viewer", authorize: byCampaign } },
    async (request) => {
      const campaign = await authorizedCampaign(deps, request);
      const q = request.query;
      const res = await campaigns.listDeliveries({
        campaignId: campaign.id,
        page: { page: q.page, perPage: q.per_page },
        ...filterRequest(q),
      });
      const facts = await lookUpDevices(
        devices,
        campaign.appId,
        res.deliveries.map((d) => d.deviceId),
      );
      return listView(
        res.deliveries.map((d) => deliveryView(d, facts.get(d.deviceId))),
        res.page,
        q,
      );
    },
  );

  scope.get<{ Params: IdParams; Querystring: Filters & { format: ExportFormat } }>(
    "/campaigns/:id/deliveries/export",
    { schema: exportCampaignDeliveriesSchema, config: { minRole: "viewer", authorize: byCampaign } },
    async (request, reply) => {
      const campaign = await authorizedCampaign(deps, request);
      const { format } = request.query;
      // Ends the RPC stream whenever the response ends early: the client went away or a step failed.
      const rpc = new AbortController();
      reply.raw.once("close", () => rpc.abort());
      const chunks = campaigns.exportDeliveries(
        { campaignId: campaign.id, ...filterRequest(request.query), columns: true },
        // No deadline: an export of any size takes as long as the client reads; it ends
        // when the response does (the signal) or the stream does.
        { signal: rpc.signal, timeoutMs: 0 },
      );
      // Chunk n is written while the next ones are read, looked up and turned into text
      // (readAhead): the RPC, LookupDevices and the socket run side by side, not in turn.
      async function* texts(): AsyncGenerator<string> {
        try {
          yield* readAhead(
            chunks,
            async (chunk) => {
              const c = chunkColumns(chunk);
              const facts = await lookUpDevices(devices, campaign.appId, c.deviceIds);
              return chunkText(
                format,
                c.deviceIds.map((id, i) => columnView(c, i, facts.get(id))),
              );
            },
            EXPORT_READ_AHEAD,
          );
        } finally {
          rpc.abort();
        }
      }
      // The first chunk before any byte is sent: a backend down or a campaign gone is a JSON error.
      const body = exportStream(exportText(format, await startedIterable(texts())));
      return reply
        .header("content-type", EXPORT_CONTENT_TYPES[format])
        .header("content-disposition", `attachment; filename="campaign-${campaign.id}-deliveries.${format}"`)
        .header("cache-control", "no-store")
        .send(body);
    },
  );

  scope.get<{ Params: IdParams; Querystring: { limit: number } }>(
    "/devices/:id/deliveries",
    {
      schema: listDeviceDeliveriesSchema,
      config: { minRole: "viewer", clientKey: "device-proof", authorize: byDevice },
    },
    async (request) => {
      const device = await authorizedDevice(deps, request, request.params.id);
      const res = await campaigns.listDeviceDeliveries({
        appId: device.appId,
        deviceId: device.id,
        limit: request.query.limit,
      });
      return { data: res.deliveries.map((d) => deviceDeliveryView(d, device)) };
    },
  );

  scope.delete<{ Params: { app_id: string; external_id: string } }>(
    "/apps/:app_id/users/:external_id",
    { schema: eraseUserSchema, config: { minRole: "developer", authorize: appInPath(apps) } },
    async (request) => {
      const app = await apps.authorized(principalOf(request), request.params.app_id);
      const externalId = request.params.external_id;
      // Records first, devices last: if anything fails on the way, the devices are still
      // there, so a retry finds them and erases what is left (every step answers zeros
      // for what is already gone).
      const ids = await deviceIdsOf(deps, app.id, externalId);
      let receipts = 0n;
      let engagements = 0n;
      for (let i = 0; i < ids.length; i += ERASE_CHUNK) {
        const erased = await campaigns.eraseDeviceRecords({ appId: app.id, deviceIds: ids.slice(i, i + ERASE_CHUNK) });
        receipts += erased.receipts;
        engagements += erased.engagements;
      }
      // The external id in campaign targets, by itself: it is there even when no device is left.
      const campaignAudiences = (await campaigns.eraseDeviceRecords({ appId: app.id, deviceIds: [], externalId }))
        .audiences;
      const res = await devices.eraseUser({ appId: app.id, externalId, receipts, engagements, campaignAudiences });
      return {
        external_id: externalId,
        devices: Number(res.devices),
        receipts: Number(receipts),
        engagements: Number(engagements),
        in_app_states: Number(res.inAppStates),
        audiences: Number(campaignAudiences + res.inAppAudiences),
      };
    },
  );
}

/** Every device of the external id in the app, through ListDevices's filter, a full page at a time. */
async function deviceIdsOf(deps: Pick<RouteDeps, "devices">, appId: string, externalId: string): Promise<string[]> {
  const ids: string[] = [];
  for (let page = 1; page <= PAGING.maxPage; page++) {
    const res = await deps.devices.listDevices({
      appId,
      externalId,
      page: { page, perPage: PAGING.maxPerPage },
    });
    ids.push(...res.devices.map((d) => d.id));
    if (res.devices.length < PAGING.maxPerPage || (res.page && ids.length >= Number(res.page.total))) break;
  }
  return [...new Set(ids)];
}
