import { STATUS_CODES } from "node:http";
import { Http2ServerRequest } from "node:http2";
import type { Logger } from "@herald/runtime/service";
import type { Connection } from "../connections.js";
import type { AnsweredFault } from "../faults.js";
import { readBody, sendJson, singleHeader } from "../http-util.js";
import type { ProviderHandler, ProviderRequest, ProviderResponse } from "../platform.js";
import type { NewDeliveryOf, Recorder } from "../recorder.js";
import { ok, refuse, type Checked } from "../refusal.js";
import { ConnectionAuth } from "./connection-auth.js";
import { DEVICE_TOKEN, type ApnsDeviceStore, type DeviceRateLimiter } from "./devices.js";
import type { ApnsKeyStore } from "./keys.js";
import { checkPayload, payloadLimit } from "./payload.js";
import { parseBearer, type ProviderTokenVerifier } from "./provider-token.js";
import {
  checkApnsHeaders,
  checkApnsId,
  checkTopicForKey,
  effectivePushType,
  hasDuplicateHeader,
} from "./request-headers.js";
import { uuid } from "../ids.js";

const DEVICE_PATH = "/3/device";

export interface ApnsServiceDeps {
  keys: ApnsKeyStore;
  verifier: ProviderTokenVerifier;
  devices: ApnsDeviceStore;
  limiter: DeviceRateLimiter;
  recorder: Recorder;
  log: Logger;
  minTokenIntervalMs: number;
  /** Refuse well-formed tokens never issued here (BadDeviceToken); otherwise accept them, as Apple cannot be asked. */
  strictTokens: boolean;
  now?: () => number;
}

/**
 * The APNs provider API at `POST /3/device/<token>`, HTTP/2 only. Checks run in this
 * order: protocol, method, path and token format, repeated headers, apns-id, provider
 * token (then the connection's token rules; the first valid token lifts the one-stream
 * limit), topic, push type, priority, expiration, collapse id, size, payload, device
 * state, per-device rate. Every answer carries `apns-id`.
 */
export class ApnsService implements ProviderHandler {
  readonly platform = "apns" as const;
  private readonly auth = new WeakMap<Connection, ConnectionAuth>();
  private readonly now: () => number;

  constructor(private readonly deps: ApnsServiceDeps) {
    this.now = deps.now ?? Date.now;
  }

  owns(pathname: string): boolean {
    return pathname === "/3" || pathname.startsWith("/3/");
  }

  async handle(req: ProviderRequest, res: ProviderResponse, url: URL, conn: Connection | undefined): Promise<void> {
    if (!(req instanceof Http2ServerRequest) || !conn) {
      // APNs speaks only HTTP/2 (its ALPN offers nothing else); the closest HTTP/1.1 answer is a refusal and a closed connection.
      sendJson(res, 505, { reason: "HTTP2Required" }, { connection: "close" });
      return;
    }
    // The request's apns-id once it is known to be valid; until then, one of the simulator's.
    const answer = { apnsId: uuid() };
    const result = await this.accept(req, url, conn, answer);
    if (!result.ok) {
      const { status, reason, timestamp } = result.refusal;
      this.deps.log.debug({ status, reason, connection: conn.id }, "apns push refused");
      sendJson(res, status, timestamp === undefined ? { reason } : { reason, timestamp }, { "apns-id": answer.apnsId });
      return;
    }
    res.statusCode = 200;
    res.setHeader("apns-id", answer.apnsId);
    res.end();
  }

  refuseWithFault(_req: ProviderRequest, res: ProviderResponse, fault: AnsweredFault): void {
    const headers = { "apns-id": uuid() };
    // Apple's 429 carries no Retry-After, so an injected throttle does not either.
    if (fault.kind === "throttle") sendJson(res, 429, { reason: "TooManyRequests" }, headers);
    else if (fault.kind === "shutdown") sendJson(res, 503, { reason: "Shutdown" }, headers);
    else sendJson(res, fault.status, { reason: faultReason(fault.status) }, headers);
  }

  private async accept(
    req: Http2ServerRequest,
    url: URL,
    conn: Connection,
    answer: { apnsId: string },
  ): Promise<Checked<NewDeliveryOf<"apns">>> {
    if (req.method !== "POST") return refuse(405, "MethodNotAllowed");
    const path = url.pathname;
    if (path === DEVICE_PATH || path === `${DEVICE_PATH}/`) return refuse(400, "MissingDeviceToken");
    if (!path.startsWith(`${DEVICE_PATH}/`)) return refuse(404, "BadPath");
    const rawToken = path.slice(DEVICE_PATH.length + 1);
    if (!DEVICE_TOKEN.test(rawToken)) return refuse(400, "BadDeviceToken");
    const deviceToken = rawToken.toLowerCase();

    if (hasDuplicateHeader(req.rawHeaders)) return refuse(400, "DuplicateHeaders");
    const apnsId = checkApnsId(req.headers["apns-id"]);
    if (!apnsId.ok) return apnsId;
    if (apnsId.value) answer.apnsId = apnsId.value;

    const bearer = parseBearer(req.headers.authorization);
    if (!bearer.ok) return bearer;
    const nowMs = this.now();
    const verified = await this.deps.verifier.verify(bearer.value, Math.floor(nowMs / 1000));
    if (!verified.ok) return verified;
    const accepted = this.connectionAuth(conn).accept(verified.value, nowMs);
    if (!accepted.ok) return accepted;
    conn.raiseStreamLimit();

    const headers = checkApnsHeaders(req.headers);
    if (!headers.ok) return headers;
    const h = headers.value;
    const key = this.deps.keys.get(verified.value.keyId);
    if (!key) return refuse(403, "InvalidProviderToken");
    const topic = checkTopicForKey(h.topic, h.pushType, key.topics);
    if (!topic.ok) return topic;

    const limit = payloadLimit(effectivePushType(h));
    const declared = singleHeader(req.headers["content-length"]);
    if (declared && Number(declared) > limit) return refuse(413, "PayloadTooLarge");
    const body = await readBody(req, limit);
    if (body.tooLarge) return refuse(413, "PayloadTooLarge");
    const payload = checkPayload(body.bytes, h.pushType);
    if (!payload.ok) return payload;

    const device = this.deps.devices.get(deviceToken);
    if (device) {
      if (device.state === "bad") return refuse(400, "BadDeviceToken");
      if (device.state === "unregistered") return refuse(410, "Unregistered", device.since ?? nowMs);
      if (device.state === "expired") return refuse(410, "ExpiredToken", device.since ?? nowMs);
      if (device.topic !== null && device.topic !== h.topic) return refuse(400, "DeviceTokenNotForTopic");
    } else if (this.deps.strictTokens) {
      return refuse(400, "BadDeviceToken");
    }
    if (!this.deps.limiter.take(deviceToken, nowMs)) return refuse(429, "TooManyRequests");

    return ok(
      this.deps.recorder.record({
        id: uuid(),
        platform: "apns",
        target: deviceToken,
        device_token: deviceToken,
        apns_id: answer.apnsId,
        topic: h.topic,
        push_type: h.pushType,
        priority: h.priority,
        expiration: h.expiration,
        collapse_id: h.collapseId,
        payload: body.bytes.toString("utf8"),
      }),
    );
  }

  private connectionAuth(conn: Connection): ConnectionAuth {
    let auth = this.auth.get(conn);
    if (!auth) {
      auth = new ConnectionAuth(this.deps.minTokenIntervalMs);
      this.auth.set(conn, auth);
      conn.apns = auth;
    }
    return auth;
  }
}

/** Apple's reasons for the 5xx it documents; other injected statuses get their HTTP reason phrase. */
function faultReason(status: number): string {
  if (status === 500) return "InternalServerError";
  if (status === 503) return "ServiceUnavailable";
  return (STATUS_CODES[status] ?? "Error").replace(/[^A-Za-z]/g, "");
}
