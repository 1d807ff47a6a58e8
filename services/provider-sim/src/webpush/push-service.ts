import { STATUS_CODES } from "node:http";
import type { Logger } from "@herald/runtime/service";
import type { AnsweredFault } from "../faults.js";
import { readBody, sendJson, singleHeader } from "../http-util.js";
import type { ProviderHandler, ProviderRequest, ProviderResponse } from "../platform.js";
import type { NewDeliveryOf, Recorder } from "../recorder.js";
import { decryptPushMessage } from "./decrypt.js";
import { checkContentEncoding, checkPushHeaders } from "./push-headers.js";
import { ok, refuse, type Checked } from "../refusal.js";
import type { SubscriptionStore } from "./subscriptions.js";
import { parseVapidAuthorization, verifyVapidToken } from "./vapid.js";
import { uuid } from "../ids.js";

/** RFC 8030 §7.2: a push service must accept at least 4096 bytes of encrypted content. */
export const MAX_CONTENT_BYTES = 4096;
/** The longest a push service here keeps a message (four weeks, as FCM and Mozilla do); the 201 echoes the TTL used. */
const MAX_TTL_S = 2_419_200;

/**
 * The push service side of RFC 8030/8291/8292 at `POST /wp/<subscription id>`:
 * refuses anything a real push service or browser would refuse, and records what the
 * user agent would have shown. Checks run in the order a push service can make them:
 * target, credentials, headers, size, content.
 */
export class WebPushService implements ProviderHandler {
  readonly platform = "webpush" as const;

  constructor(
    private readonly store: SubscriptionStore,
    private readonly recorder: Recorder,
    /** The origin endpoints are issued under: the only VAPID `aud` accepted. */
    private readonly origin: string,
    private readonly log: Logger,
  ) {}

  owns(pathname: string): boolean {
    return pathname.startsWith("/wp/");
  }

  async handle(req: ProviderRequest, res: ProviderResponse, url: URL): Promise<void> {
    if (req.method !== "POST") {
      sendJson(res, 405, { reason: "MethodNotAllowed" }, { allow: "POST" });
      return;
    }
    const subscriptionId = url.pathname.slice("/wp/".length);
    const result = await this.accept(req, subscriptionId);
    if (!result.ok) {
      this.log.debug(
        { subscription_id: subscriptionId, status: result.refusal.status, reason: result.refusal.reason },
        "push refused",
      );
      sendJson(res, result.refusal.status, { reason: result.refusal.reason });
      return;
    }
    const delivery = result.value;
    res.statusCode = 201;
    res.setHeader("location", `/msg/${delivery.id}`);
    res.setHeader("ttl", String(Math.min(delivery.headers.ttl, MAX_TTL_S)));
    res.end();
  }

  refuseWithFault(_req: ProviderRequest, res: ProviderResponse, fault: AnsweredFault): void {
    if (fault.kind === "throttle") {
      sendJson(res, 429, { reason: "TooManyRequests" }, { "retry-after": String(fault.retryAfterS) });
    } else {
      const status = fault.kind === "shutdown" ? 503 : fault.status;
      sendJson(res, status, { reason: (STATUS_CODES[status] ?? "Error").replace(/[^A-Za-z]/g, "") });
    }
  }

  private async accept(req: ProviderRequest, subscriptionId: string): Promise<Checked<NewDeliveryOf<"webpush">>> {
    const sub = this.store.get(subscriptionId);
    if (!sub) return refuse(404, "NotFound");
    if (sub.gone) return refuse(410, "Gone");

    const auth = parseVapidAuthorization(req.headers.authorization);
    if (!auth.ok) return auth;
    if (!auth.value.publicKey.equals(sub.applicationServerKey)) return refuse(403, "VapidKeyMismatch");
    const verified = await verifyVapidToken(auth.value.token, sub.verificationKey, this.origin);
    if (!verified.ok) return verified;

    const headers = checkPushHeaders({ ttl: req.headers.ttl, urgency: req.headers.urgency, topic: req.headers.topic });
    if (!headers.ok) return headers;

    // Refuse a declared oversize body before reading it; a chunked or HTTP/2 body is counted as it arrives.
    const declared = singleHeader(req.headers["content-length"]);
    if (declared && Number(declared) > MAX_CONTENT_BYTES) return refuse(413, "PayloadTooLarge");
    const body = await readBody(req, MAX_CONTENT_BYTES);
    if (body.tooLarge) return refuse(413, "PayloadTooLarge");

    const encoding = checkContentEncoding(req.headers["content-encoding"], body.bytes.length);
    if (!encoding.ok) return encoding;
    let plaintext: Buffer = Buffer.alloc(0);
    if (body.bytes.length > 0) {
      const decrypted = decryptPushMessage(body.bytes, sub.ecdh, sub.authSecret);
      if (!decrypted.ok) return decrypted;
      plaintext = decrypted.value;
    }

    return ok(
      this.recorder.record({
        id: uuid(),
        platform: "webpush",
        target: sub.id,
        subscription_id: sub.id,
        endpoint: sub.endpoint,
        payload: plaintext.toString("utf8"),
        headers: headers.value,
      }),
    );
  }
}
