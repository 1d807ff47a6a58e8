import { create } from "@bufbuild/protobuf";
import { Platform } from "@herald/proto/common";
import { GetSendCredentialsResponseSchema } from "@herald/proto/credential";
import { Http2Pool } from "@herald/sender";
import fc from "fast-check";
import { describe, it } from "vitest";
import { makeApnsKey } from "../../../test/support/credential-fixtures.js";
import { fuzzTimeout } from "../../../test/support/fuzz-settings.js";
import { peerScript } from "../../../test/support/h2-fuzz-scripts.js";
import { assertProperty, FUZZ_POOL, runExample, useFuzzPeer } from "../../../test/support/provider-fuzz.js";
import { ApnsProvider, tokenAccepted } from "../src/apns-provider.js";
import { ProviderTokens } from "../src/provider-token.js";

// The APNs sender's provider and HTTP/2 pool against a peer that answers as APNs never
// should (test/support/h2-fuzz-peer.ts), driven by fast-check with a fixed seed: no
// crash, no unhandled rejection, and every device of every batch gets exactly one outcome.

const REASONS = [
  "BadDeviceToken",
  "Unregistered",
  "DeviceTokenNotForTopic",
  "TooManyRequests",
  "InternalServerError",
  "ServiceUnavailable",
  "Shutdown",
  "IdleTimeout",
  "ExpiredProviderToken",
  "InvalidProviderToken",
  "MissingProviderToken",
  "TooManyProviderTokenUpdates",
  "PayloadTooLarge",
  "BadTopic",
  "BadPath",
];

/** APNs error bodies, valid and not: known and unknown reasons, timestamps of every type and range. */
const apnsBodies = (): fc.Arbitrary<string> =>
  fc
    .record(
      {
        reason: fc.oneof(
          { weight: 4, arbitrary: fc.constantFrom<unknown>(...REASONS) },
          { weight: 1, arbitrary: fc.constantFrom<unknown>(123, null, "", "x".repeat(100), "Bad\u0000Token", ["a"]) },
        ),
        timestamp: fc.constantFrom<unknown>(Date.now(), 1, -1, 0, "1700000000000", "soon", 8.64e15, 9e15, 1e300),
      },
      { requiredKeys: [] },
    )
    .map((body) => JSON.stringify(body));

const deviceToken: fc.Arbitrary<string> = fc.oneof(
  { weight: 9, arbitrary: fc.uint8Array({ minLength: 32, maxLength: 32 }).map((b) => Buffer.from(b).toString("hex")) },
  { weight: 1, arbitrary: fc.constantFrom("", "zz", "a".repeat(200), "../x") },
);

const { peer, figures } = useFuzzPeer("APNs provider", (seen) => ({ "provider answers fuzzed": seen.streams }));
const key = makeApnsKey();
const credentials = create(GetSendCredentialsResponseSchema, {
  fingerprint: "fuzz",
  credentials: {
    case: "apns",
    value: { p8Key: key.p8, keyId: key.keyId, teamId: key.teamId, topic: "com.example.fuzz", environment: "sandbox" },
  },
});

describe("APNs sender against a misbehaving APNs", () => {
  it("gives every device exactly one outcome, whatever APNs answers", { timeout: fuzzTimeout(45_000) }, async () => {
    await assertProperty(
      fc.tuple(peerScript(apnsBodies()), fc.array(deviceToken, { minLength: 1, maxLength: 12 })),
      async ([script, tokens]) => {
        peer.play(script);
        const pool = new Http2Pool({ ...FUZZ_POOL, label: "APNs", maxConnections: 3, accepted: tokenAccepted });
        const provider = new ApnsProvider({ pool, tokens: new ProviderTokens(), baseUrl: peer.origin });
        const batch = { platform: Platform.IOS, credentials, tokens, dataJson: JSON.stringify({ k: "v" }) };
        await runExample({ provider, pool }, batch, figures);
      },
    );
  });
});
