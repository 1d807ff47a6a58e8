import { badRequest, fcmError, type FcmChecked } from "./fcm-errors.js";
import { jsonName, SEND_REQUEST, TARGET_FIELDS, type Spec } from "./message-schema.js";

/**
 * FCM: "the maximum payload for both message types is 4096 bytes"; 2048 for topic
 * messages (docs/providers.md §FCM message).
 */
export const MAX_MESSAGE_BYTES = 4096;
export const MAX_TOPIC_MESSAGE_BYTES = 2048;
/** FCM: "The maximum time to live supported is 4 weeks". */
export const MAX_TTL_S = 4 * 7 * 24 * 3600;
/** FCM allows at most five topics in a condition. */
const MAX_CONDITION_TOPICS = 5;

export type Target = { kind: "token" | "topic" | "condition"; value: string };

export interface SendRequest {
  /** The `message` object as sent. */
  message: Record<string, unknown>;
  validateOnly: boolean;
  target: Target;
}

const TOKEN = /^[A-Za-z0-9_:-]{1,4096}$/;
const TOPIC = /^[a-zA-Z0-9-_.~%]{1,900}$/;
const ANALYTICS_LABEL = /^[a-zA-Z0-9-_.~%]{1,50}$/;
const DURATION = /^-?[0-9]+(\.[0-9]{1,9})?s$/;
const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/;
const RESERVED_DATA_KEYS = new Set(["from", "notification", "message_type"]);
const RESERVED_DATA_PREFIXES = ["google.", "gcm."];

const invalid = (message: string) => fcmError(400, "INVALID_ARGUMENT", message);

/**
 * Validates a `messages:send` body in two stages, as FCM does: the JSON must parse into
 * the v1 schema (unknown fields, wrong types — e.g. a non-string `data` value — and two
 * targets are refused with a BadRequest detail), then FCM's own rules (one target, a
 * well-formed token/topic/condition, no reserved data keys, a TTL of at most four weeks,
 * analytics labels, the payload size) with an FcmError INVALID_ARGUMENT.
 *
 * Size is measured as the UTF-8 length of the message's JSON without its target and
 * name: what FCM delivers, not the envelope around it.
 */
export function checkSendRequest(body: unknown): FcmChecked<SendRequest> {
  const parsed = parseValue(body, SEND_REQUEST, "");
  if (parsed) return parsed;
  const request = body as Record<string, unknown>;
  const message = get(request, "message");
  if (!isObject(message)) return invalid("Request contains an invalid argument.");

  const set = TARGET_FIELDS.filter((f) => get(message, f) !== undefined && get(message, f) !== null);
  if (set.length > 1) {
    return badRequest(
      "message",
      `Invalid value at 'message' (oneof), oneof field 'target' is already set. Cannot set '${set[1]}'`,
    );
  }
  if (set.length === 0) return invalid("Recipient of the message is not set.");
  const target: Target = { kind: set[0]!, value: get(message, set[0]!) as string };
  if (target.kind === "token" && !TOKEN.test(target.value)) {
    return invalid("The registration token is not a valid FCM registration token");
  }
  if (target.kind === "topic" && !TOPIC.test(target.value)) return invalid("Invalid topic name.");
  if (target.kind === "condition" && !validCondition(target.value)) return invalid("Invalid condition expression.");

  const android = get(message, "android") as Record<string, unknown> | undefined;
  for (const data of [get(message, "data"), android && get(android, "data")]) {
    for (const key of Object.keys((data as Record<string, unknown> | undefined) ?? {})) {
      if (RESERVED_DATA_KEYS.has(key) || RESERVED_DATA_PREFIXES.some((p) => key.startsWith(p))) {
        return invalid(`Invalid data payload key: ${key.slice(0, 100)}`);
      }
    }
  }
  const ttl = android && get(android, "ttl");
  if (typeof ttl === "string" && (ttl.startsWith("-") || parseFloat(ttl) > MAX_TTL_S)) {
    return invalid("TTL must be between 0 and 4 weeks (2419200s).");
  }
  for (const label of analyticsLabels(message)) {
    if (!ANALYTICS_LABEL.test(label)) return invalid("Analytics label must match [a-zA-Z0-9-_.~%]{1,50}.");
  }

  const payload = Object.fromEntries(
    Object.entries(message).filter(([k]) => !["token", "topic", "condition", "name"].includes(k)),
  );
  const limit = target.kind === "token" ? MAX_MESSAGE_BYTES : MAX_TOPIC_MESSAGE_BYTES;
  if (Buffer.byteLength(JSON.stringify(payload)) > limit)
    return invalid(`Message is too big: the limit is ${limit} bytes.`);

  const validateOnly = get(request, "validate_only") === true;
  return { ok: true, value: { message, validateOnly, target } };
}

/** A field by its proto name or its JSON (camelCase) name. */
export function get(obj: Record<string, unknown>, snake: string): unknown {
  return obj[snake] ?? obj[jsonName(snake)];
}

/** Returns the refusal for the first value that does not fit `spec`, or undefined. `null` means "not set" (proto3 JSON). */
function parseValue(value: unknown, spec: Spec, path: string): FcmChecked<never> | undefined {
  if (value === null) return undefined;
  const bad = (type: string) => badRequest(path, `Invalid value at '${path}' (${type}), ${preview(value)}`);
  if (typeof spec === "object" && "values" in spec) {
    const ok = typeof value === "string" && spec.values.some((v) => v.toLowerCase() === value.toLowerCase());
    return ok ? undefined : bad(`type.googleapis.com/${spec.enum}`);
  }
  if (typeof spec === "object") {
    if (!isObject(value)) {
      return path === ""
        ? badRequest("", "Invalid JSON payload received. Expected an object.")
        : bad(`type.googleapis.com/${spec.message}`);
    }
    const seen = new Map<string, string>();
    for (const [key, v] of Object.entries(value)) {
      const snake = spec.fields[key] !== undefined ? key : Object.keys(spec.fields).find((f) => jsonName(f) === key);
      const at = path === "" ? key : `${path}.${key}`;
      if (snake === undefined) {
        const where = path === "" ? "" : ` at '${path}'`;
        return badRequest(
          path,
          `Invalid JSON payload received. Unknown name "${key.slice(0, 100)}"${where}: Cannot find field.`,
        );
      }
      if (seen.has(snake)) {
        return badRequest(
          at,
          `Invalid JSON payload received. Duplicate field "${snake}" ("${seen.get(snake)}" and "${key}").`,
        );
      }
      seen.set(snake, key);
      const refusal = parseValue(v, spec.fields[snake]!, path === "" ? snake : `${path}.${snake}`);
      if (refusal) return refusal;
    }
    return undefined;
  }
  switch (spec) {
    case "string":
      return typeof value === "string" ? undefined : bad("TYPE_STRING");
    case "bool":
      return typeof value === "boolean" ? undefined : bad("TYPE_BOOL");
    case "int32":
      return (typeof value === "number" && Number.isInteger(value)) ||
        (typeof value === "string" && /^-?\d+$/.test(value))
        ? undefined
        : bad("TYPE_INT32");
    case "float":
      return typeof value === "number" ? undefined : bad("TYPE_FLOAT");
    case "duration":
      return typeof value === "string" && DURATION.test(value)
        ? undefined
        : bad("type.googleapis.com/google.protobuf.Duration");
    case "timestamp":
      return typeof value === "string" && TIMESTAMP.test(value)
        ? undefined
        : bad("type.googleapis.com/google.protobuf.Timestamp");
    case "struct":
      return isObject(value) ? undefined : bad("type.googleapis.com/google.protobuf.Struct");
    case "stringList":
    case "durationList": {
      if (!Array.isArray(value))
        return bad(spec === "stringList" ? "TYPE_STRING" : "type.googleapis.com/google.protobuf.Duration");
      const item = spec === "stringList" ? "string" : "duration";
      for (let i = 0; i < value.length; i++) {
        const at = `${path}[${i}]`;
        // A list item cannot be "not set": null is refused like any other wrong type.
        if (value[i] === null) return badRequest(at, `Invalid value at '${at}', null`);
        const refusal = parseValue(value[i], item, at);
        if (refusal) return refusal;
      }
      return undefined;
    }
    case "stringMap": {
      if (!isObject(value)) return bad("TYPE_MESSAGE");
      const entries = Object.values(value);
      for (let i = 0; i < entries.length; i++) {
        if (typeof entries[i] !== "string") {
          return badRequest(
            `${path}[${i}].value`,
            `Invalid value at '${path}[${i}].value' (TYPE_STRING), ${preview(entries[i])}`,
          );
        }
      }
      return undefined;
    }
  }
}

function analyticsLabels(message: Record<string, unknown>): string[] {
  const labels: unknown[] = [];
  const options = (o: unknown) => (isObject(o) ? get(o, "fcm_options") : undefined);
  for (const holder of [message, get(message, "android"), get(message, "apns"), get(message, "webpush")]) {
    const opts = options(holder);
    if (isObject(opts)) labels.push(get(opts, "analytics_label"));
  }
  return labels.filter((l): l is string => typeof l === "string");
}

/** `'a' in topics && ('b' in topics || !('c' in topics))`: topic terms joined by &&, ||, ! and parentheses. */
function validCondition(condition: string): boolean {
  const TERM = /^'([a-zA-Z0-9-_.~%]+)' in topics/;
  let rest = condition.trim();
  let topics = 0;
  let depth = 0;
  let expectTerm = true;
  while (rest.length > 0) {
    const term = TERM.exec(rest);
    if (expectTerm && term) {
      topics += 1;
      rest = rest.slice(term[0].length);
      expectTerm = false;
    } else if (expectTerm && (rest.startsWith("!") || rest.startsWith("("))) {
      if (rest.startsWith("(")) depth += 1;
      rest = rest.slice(1);
    } else if (!expectTerm && (rest.startsWith("&&") || rest.startsWith("||"))) {
      rest = rest.slice(2);
      expectTerm = true;
    } else if (!expectTerm && rest.startsWith(")") && depth > 0) {
      depth -= 1;
      rest = rest.slice(1);
    } else {
      return false;
    }
    rest = rest.trimStart();
  }
  return !expectTerm && depth === 0 && topics >= 1 && topics <= MAX_CONDITION_TOPICS;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function preview(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 100 ? `${text.slice(0, 100)}…` : text;
}
