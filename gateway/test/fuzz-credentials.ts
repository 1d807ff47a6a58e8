import fc from "fast-check";
import { describe } from "../../test/support/hostile-json.js";
import type { FuzzOperation } from "./fuzz-oracle.js";
import {
  type Credential,
  type FuzzContext,
  type FuzzTarget,
  headerText,
  idempotencyParam,
  type Part,
  PUSH_TOKEN_HEADER,
} from "./fuzz-parts.js";

/**
 * The credentials and headers of fuzzed requests: Authorization that authenticates
 * nobody, valid credentials in odd spellings with or without a device's push token, and
 * odd headers (Idempotency-Key of any shape, a huge one, a second Authorization).
 */

/** Authorization values that authenticate nobody. */
export function badAuthorization(ctx: FuzzContext): fc.Arbitrary<Part> {
  const refused = (note: string, authorization?: string | string[]): Part => ({
    ...(authorization === undefined ? {} : { headers: { authorization } }),
    refusals: ["no valid credentials"],
    notes: [note],
  });
  return fc.oneof(
    fc.constant(refused("no Authorization")),
    fc.constantFrom(
      refused("unknown key", `Bearer ${ctx.unknownKey}`),
      refused("revoked key", `Bearer ${ctx.revokedKey}`),
      refused("bare Bearer", "Bearer"),
      refused("Basic scheme", "Basic dXNlcjpwYXNz"),
      refused("two tokens", `Bearer ${ctx.unknownKey} ${ctx.unknownKey}`),
      refused("JWT-shaped garbage", "Bearer eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0."),
      refused("token of 9,000 characters", `Bearer hk_live_${"a".repeat(9_000)}`),
      refused("hk_live_ without a secret", "Bearer hk_live_"),
      refused("latin-1 token", "Bearer hk_live_\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9"),
      refused("empty header", ""),
    ),
  );
}

/** A valid credential, now and then in an odd but valid spelling, with a push token header for client keys. */
export function goodAuthorization(
  op: FuzzOperation,
  target: FuzzTarget,
  who: fc.Arbitrary<Credential>,
): fc.Arbitrary<Part> {
  return fc
    .tuple(who, fc.constantFrom("Bearer ", "bearer ", "BEARER ", "Bearer \t"), pushTokenHeader(target))
    .map(([credential, scheme, proof]) => {
      const part: Part = {
        headers: { authorization: `${scheme}${target.credentials[credential]}` },
        refusals: [],
        notes: [`as ${credential}`],
      };
      if (credential === "clientKey") {
        if (!op.clientKey) part.refusals!.push("a client key may not call it");
        else if (op.clientKey === "device-proof") {
          if (proof.value !== undefined) part.headers![PUSH_TOKEN_HEADER] = proof.value;
          part.notes.push(proof.note);
          if (!proof.proves) part.refusals!.push("a client key without the device's push token");
        }
      }
      return part;
    });
}

function pushTokenHeader(target: FuzzTarget): fc.Arbitrary<{ value?: string; proves: boolean; note: string }> {
  return fc.oneof(
    { weight: 3, arbitrary: fc.constant({ value: target.pushToken, proves: true, note: "its push token" }) },
    // The registry keeps APNs tokens in lower case: the same token in capitals is the same token.
    {
      weight: 1,
      arbitrary: fc.constant({
        value: target.pushToken.toUpperCase(),
        proves: true,
        note: "its push token in capitals",
      }),
    },
    { weight: 1, arbitrary: fc.constant({ proves: false, note: "no push token" }) },
    {
      weight: 2,
      arbitrary: fc
        .oneof(
          headerText(),
          fc.constantFrom("", `${target.pushToken} `, `${target.pushToken.slice(1)}`, "a".repeat(20_000)),
        )
        // Header values lose surrounding spaces on the wire: a padded token may still prove the device.
        .filter((v) => v.trim().toLowerCase() !== target.pushToken)
        .map((value) => ({ value, proves: false, note: `push token ${describe(value)}` })),
    },
  );
}

/** Odd headers: Idempotency-Key of any shape, X-Request-Id, forwarding and override headers, a huge one. */
export function anyHeaders(ctx: FuzzContext, op: FuzzOperation): fc.Arbitrary<Part> {
  const idem = idempotencyParam(op);
  const idemValue = fc.oneof(
    fc.uuid(),
    headerText(),
    fc.constantFrom("", " ", "k".repeat(255), "k".repeat(256), "\u00e9"),
  );
  const extra = fc.constantFrom<Record<string, string | string[]>>(
    {},
    { "x-request-id": "a".repeat(129) },
    { "x-request-id": "\u00e9;DROP" },
    { "x-forwarded-for": "999.1.1.1, <script>" },
    { "x-http-method-override": "DELETE" },
    { accept: "application/xml" },
    { "accept-encoding": "gzip;q=abc" },
    { "x-pad": "p".repeat(100_000) },
    { "if-none-match": '"nonsense", W/"x", *' },
    { authorization: ["Bearer hk_live_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"] },
  );
  return fc.tuple(fc.option(idemValue, { freq: 2 }), extra).map(([key, headers]) => {
    const part: Part = { headers: { ...headers }, refusals: [], notes: Object.keys(headers).map((h) => `header ${h}`) };
    if (key !== null) {
      part.headers!["idempotency-key"] = key;
      part.notes.push(`Idempotency-Key ${describe(key)}`);
      // inject() hands header values over untrimmed: the schema sees them as sent.
      if (idem && !ctx.oracle.textValid(idem.schema, key)) part.refusals!.push("Idempotency-Key breaks its schema");
    }
    return part;
  });
}
