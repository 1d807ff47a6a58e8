import { alreadyExists, notFound } from "@herald/runtime";
import type {
  CreateSegmentRequest,
  DeleteSegmentRequest,
  GetSegmentRequest,
  ListSegmentsRequest,
  UpdateSegmentRequest,
} from "@herald/proto/device";
import type { SegmentLookup } from "./audience-filter.js";
import { isUuid, requireAppId } from "./ids.js";
import { pageInfo, pageOf } from "./paging.js";
import { toSegment } from "./segment-mapping.js";
import { segmentName, storedSegmentRule } from "./segment-rule.js";
import type { SegmentRow, SegmentStore, SegmentWrite } from "./segment-store.js";
import type { DeviceStore } from "./device-store.js";

/**
 * The segment RPCs: named, stored rules of an app. Create and Get count the targetable
 * devices the rule selects now, with the same query CountAudience runs.
 */
export class Segments {
  constructor(
    private readonly segments: SegmentStore,
    private readonly devices: DeviceStore,
  ) {}

  async create(req: CreateSegmentRequest) {
    const appId = requireAppId(req.appId);
    const name = segmentName(req.name);
    const rule = storedSegmentRule(req.rule);
    const segment = written(await this.segments.create(appId, name, rule), name);
    return { segment: toSegment(segment, await this.preview(segment)) };
  }

  async get(req: GetSegmentRequest) {
    const segment = found(isUuid(req.id) ? await this.segments.get(req.id) : undefined);
    return { segment: toSegment(segment, await this.preview(segment)) };
  }

  async list(req: ListSegmentsRequest) {
    const appId = requireAppId(req.appId);
    const page = pageOf(req.page);
    const { segments, total } = await this.segments.list(appId, page.offset, page.perPage);
    return { segments: segments.map((s) => toSegment(s)), page: pageInfo(page, total) };
  }

  async update(req: UpdateSegmentRequest) {
    const changes = {
      name: req.name === undefined ? undefined : segmentName(req.name),
      rule: req.rule === undefined ? undefined : storedSegmentRule(req.rule),
    };
    if (!isUuid(req.id)) throw notFound("segment not found");
    return { segment: toSegment(written(await this.segments.update(req.id, changes), changes.name)) };
  }

  async delete(req: DeleteSegmentRequest) {
    if (!isUuid(req.id) || !(await this.segments.delete(req.id))) throw notFound("segment not found");
    return {};
  }

  /** Resolves AudienceFilter.segment_id: another app's segment is as unknown as a missing one. */
  readonly lookup: SegmentLookup = async (appId, segmentId) => {
    const segment = await this.segments.get(segmentId);
    return segment && segment.app_id === appId.toLowerCase() ? segment.rule : undefined;
  };

  private preview(segment: SegmentRow): Promise<number> {
    return this.devices.countAudience({ appId: segment.app_id, target: { kind: "segment", rule: segment.rule } });
  }
}

function found(segment: SegmentRow | undefined): SegmentRow {
  if (!segment) throw notFound("segment not found");
  return segment;
}

function written(result: SegmentWrite, name: string | undefined): SegmentRow {
  if (result.ok) return result.segment;
  if (result.reason === "not_found") throw notFound("segment not found");
  throw alreadyExists(`the app already has a segment named "${name ?? ""}"`);
}
