import { randomBytes } from "node:crypto";
import type { Logger } from "@herald/runtime/service";
import type { AnsweredFault } from "../faults.js";
import { readBody, sendJson } from "../http-util.js";
import type { ProviderHandler, ProviderRequest, ProviderResponse } from "../platform.js";
import type { Recorder } from "../recorder.js";
import type { FcmDeviceStore } from "./devices.js";
import { badRequest, faultErrorCode, fcmError, googleError, type FcmChecked } from "./fcm-errors.js";
import { checkSendRequest, type Target } from "./message.js";
import type { AccessTokenStore } from "./oauth.js";
import { uuid } from "../ids.js";

const SEND_PATH = /^\/v1\/projects\/([^/]+)\/messages:send$/;
/** Far above any valid message (4096 bytes of payload): what is read before "too big" is certain. */
const MAX_BODY = 64 * 1024;

const AUTH_HELP =
  "Expected OAuth 2 access token, login cookie or other valid authentication credential. See https://developers.google.com/identity/sign-in/web/devconsole-project.";

export interface FcmServiceDeps {
  tokens: AccessTokenStore;
  devices: FcmDeviceStore;
  recorder: Recorder;
  log: Logger;
  /** Refuse registration tokens never issued here (INVALID_ARGUMENT); otherwise accept them. */
  strictTokens: boolean;
  now?: () => number;
}

/**
 * FCM HTTP v1 `POST /v1/projects/<project>/messages:send` (HTTP/2 or HTTP/1.1). Checks
 * in order: path and method, the OAuth access token (issued here, unexpired, of an
 * account of that project), the request body (`message.ts`), then the registration
 * token (unregistered 404, another project's 403, unknown when strict 400).
 * `validate_only` runs every check and records nothing.
 */
export class FcmService implements ProviderHandler {
  readonly platform = "fcm" as const;

  constructor(private readonly deps: FcmServiceDeps) {}

  owns(pathname: string): boolean {
    return pathname.startsWith("/v1/");
  }

  async handle(req: ProviderRequest, res: ProviderResponse, url: URL): Promise<void> {
    const result = await this.accept(req, url);
    if (!result.ok) {
      const { status, body, headers } = result.refusal;
      this.deps.log.debug({ status, fcm_status: body.error.status }, "fcm send refused");
      sendJson(res, status, body, headers);
      return;
    }
    sendJson(res, 200, { name: result.value });
  }

  refuseWithFault(_req: ProviderRequest, res: ProviderResponse, fault: AnsweredFault): void {
    const { refusal } =
      fault.kind === "throttle"
        ? fcmError(
            429,
            "QUOTA_EXCEEDED",
            "Quota exceeded for quota metric 'Send requests' of service 'fcm.googleapis.com'.",
          )
        : fault.kind === "shutdown"
          ? fcmError(503, "UNAVAILABLE", "The service is currently unavailable.")
          : fcmError(
              fault.status,
              faultErrorCode(fault.status),
              fault.status === 500 ? "Internal error encountered." : "Injected fault.",
            );
    const headers: Record<string, string> =
      fault.kind === "throttle" ? { "retry-after": String(fault.retryAfterS) } : {};
    sendJson(res, refusal.status, refusal.body, headers);
  }

  private async accept(req: ProviderRequest, url: URL): Promise<FcmChecked<string>> {
    const path = SEND_PATH.exec(url.pathname);
    if (!path) return googleError(404, "Requested entity was not found.");
    if (req.method !== "POST") return googleError(405, "Method not allowed; use POST.");
    const project = decodeURIComponent(path[1]!);

    const nowMs = (this.deps.now ?? Date.now)();
    const auth = /^Bearer[ \t]+(\S+)$/i.exec(
      typeof req.headers.authorization === "string" ? req.headers.authorization.trim() : "",
    );
    if (!auth) {
      return googleError(401, `Request is missing required authentication credential. ${AUTH_HELP}`, [
        errorInfo("CREDENTIALS_MISSING"),
      ]);
    }
    const token = this.deps.tokens.check(auth[1]!, nowMs);
    if (!token.ok) {
      const details = token.reason === "expired" ? [errorInfo("ACCESS_TOKEN_EXPIRED")] : undefined;
      return googleError(401, `Request had invalid authentication credentials. ${AUTH_HELP}`, details);
    }
    if (token.account.projectId !== project) {
      return googleError(
        403,
        `Permission 'cloudmessaging.messages.create' denied on resource '//cloudresourcemanager.googleapis.com/projects/${project.slice(0, 100)}' (or it may not exist).`,
        [
          {
            "@type": "type.googleapis.com/google.rpc.ErrorInfo",
            reason: "IAM_PERMISSION_DENIED",
            domain: "iam.googleapis.com",
            metadata: { permission: "cloudmessaging.messages.create" },
          },
        ],
      );
    }

    const raw = await readBody(req, MAX_BODY);
    if (raw.tooLarge) return fcmError(400, "INVALID_ARGUMENT", "Message is too big.");
    let body: unknown;
    try {
      body = JSON.parse(raw.bytes.toString("utf8"));
    } catch {
      return badRequest("", "Invalid JSON payload received. Unexpected token.");
    }
    const checked = checkSendRequest(body);
    if (!checked.ok) return checked;
    const { message, validateOnly, target } = checked.value;

    const refused = this.checkRegistration(target, project);
    if (refused) return refused;
    if (validateOnly) return { ok: true, value: `projects/${project}/messages/fake_message_id` };
    const name = `projects/${project}/messages/0:${nowMs}%${randomBytes(8).toString("hex")}`;
    this.deps.recorder.record({
      id: uuid(),
      platform: "fcm",
      target: target.kind === "token" ? target.value : `${target.kind}:${target.value}`,
      project,
      name,
      message,
      payload: JSON.stringify(message),
    });
    return { ok: true, value: name };
  }

  private checkRegistration(target: Target, project: string): FcmChecked<never> | undefined {
    if (target.kind !== "token") return undefined;
    const device = this.deps.devices.get(target.value);
    if (!device) {
      return this.deps.strictTokens
        ? fcmError(400, "INVALID_ARGUMENT", "The registration token is not a valid FCM registration token")
        : undefined;
    }
    if (device.unregistered) return fcmError(404, "UNREGISTERED", "Requested entity was not found.");
    if (device.projectId !== null && device.projectId !== project)
      return fcmError(403, "SENDER_ID_MISMATCH", "SenderId mismatch");
    return undefined;
  }
}

function errorInfo(reason: string): Record<string, unknown> {
  return {
    "@type": "type.googleapis.com/google.rpc.ErrorInfo",
    reason,
    domain: "googleapis.com",
    metadata: { service: "fcm.googleapis.com", method: "google.firebase.fcm.v1.FcmService.SendMessage" },
  };
}
