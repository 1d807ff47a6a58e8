import https from "node:https";
import { create } from "@bufbuild/protobuf";
import { Platform } from "@herald/proto/common";
import { type GetSendCredentialsResponse, GetSendCredentialsResponseSchema } from "@herald/proto/credential";
import { createLogger, sleep } from "@herald/runtime";
import { DEFAULT_RETRY_POLICY, Http2Pool } from "@herald/sender";
import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import { makeServiceAccount } from "../../../test/support/credential-fixtures.js";
import { fcmToken } from "../../../test/support/device-tokens.js";
import { fuzzTimeout } from "../../../test/support/fuzz-settings.js";
import { peerScript } from "../../../test/support/h2-fuzz-scripts.js";
import { HOSTILE_STRINGS } from "../../../test/support/hostile-json.js";
import { assertProperty, FUZZ_POOL, runExample, useFuzzPeer } from "../../../test/support/provider-fuzz.js";
import { FcmProvider } from "../src/fcm-provider.js";
import { OAuthTokenSource } from "../src/oauth-token.js";
import { httpsTokenEndpoint } from "../src/token-endpoint.js";

// The FCM sender's provider, OAuth token source and HTTP/2 pool against a peer that
// answers as neither FCM nor Google's token endpoint should (test/support/h2-fuzz-peer.ts):
// no crash, no unhandled rejection, every device of every batch exactly one outcome, and
// no pause longer than the whole retry budget (a Retry-After is the provider's to send).

const ERROR_CODES = [
  "UNREGISTERED",
  "QUOTA_EXCEEDED",
  "UNAVAILABLE",
  "INTERNAL",
  "INVALID_ARGUMENT",
  "SENDER_ID_MISMATCH",
  "THIRD_PARTY_AUTH_ERROR",
  "APNS_AUTH_ERROR",
  "UNSPECIFIED_ERROR",
];
const FCM_ERROR_TYPE = "type.googleapis.com/google.firebase.fcm.v1.FcmError";

const hostileText = fc.oneof(
  fc.string({ maxLength: 30 }),
  fc.constantFrom(...HOSTILE_STRINGS),
  fc.constantFrom("m".repeat(5_000), "line\nbreak", "tab\there"),
);

/** `messages:send` answers: successes, google.rpc errors with and without an FcmError detail, any field of any type. */
const fcmBodies = (): fc.Arbitrary<string> =>
  fc.oneof(
    fc.constant('{"name":"projects/fuzz/messages/0:1"}'),
    fc
      .record({
        error: fc.record(
          {
            code: fc.oneof(fc.integer({ min: 0, max: 600 }), fc.constant("404")),
            status: fc.oneof(
              fc.constantFrom<unknown>("NOT_FOUND", "INVALID_ARGUMENT", "UNAVAILABLE", "RESOURCE_EXHAUSTED"),
              fc.constantFrom<unknown>("UNAUTHENTICATED", "PERMISSION_DENIED", 42, null),
              hostileText,
            ),
            message: fc.oneof(hostileText, fc.constant<unknown>(7)),
            details: fc.array(
              fc.record(
                {
                  "@type": fc.constantFrom<unknown>(FCM_ERROR_TYPE, "type.googleapis.com/google.rpc.BadRequest", 5),
                  errorCode: fc.oneof(
                    { weight: 3, arbitrary: fc.constantFrom<unknown>(...ERROR_CODES) },
                    { weight: 1, arbitrary: hostileText },
                  ),
                },
                { requiredKeys: [] },
              ),
              { maxLength: 2 },
            ),
          },
          { requiredKeys: [] },
        ),
      })
      .map((body) => JSON.stringify(body)),
  );

/** Token endpoint answers: tokens of every shape, lifetimes of every type and sign, OAuth errors. */
const tokenBodies = (): fc.Arbitrary<string> =>
  fc.oneof(
    // Mostly a good token, so that most batches get as far as FCM.
    { weight: 4, arbitrary: fc.constant('{"access_token":"ya29.fuzz","expires_in":3600,"token_type":"Bearer"}') },
    fc
      .record(
        {
          access_token: fc.constantFrom<unknown>("ya29.fuzz", "", 5, null, "t".repeat(10_000), "t\r\nx-injected: 1"),
          expires_in: fc.constantFrom<unknown>(3600, 0, -1, "3600", 1e308, 1e-9, null),
          token_type: fc.constant("Bearer"),
        },
        { requiredKeys: ["access_token"] },
      )
      .map((body) => JSON.stringify(body)),
    fc
      .record({ error: fc.constantFrom<unknown>("invalid_grant", "", 3), error_description: hostileText })
      .map((body) => JSON.stringify(body)),
  );

const deviceToken: fc.Arbitrary<string> = fc.oneof(
  { weight: 9, arbitrary: fc.constant(null).map(() => fcmToken()) },
  { weight: 1, arbitrary: fc.constantFrom("", "x") },
);

const { peer, figures } = useFuzzPeer("FCM provider", (seen) => ({
  "provider answers fuzzed": seen.streams + seen.tokens,
  "of them token requests": seen.tokens,
}));
let account: ReturnType<typeof makeServiceAccount>;
let credentials: GetSendCredentialsResponse;
const log = createLogger("fcm-fuzz", "silent");

beforeAll(() => {
  account = makeServiceAccount({ tokenUri: peer.tokenUrl });
  credentials = create(GetSendCredentialsResponseSchema, {
    fingerprint: "fuzz",
    credentials: { case: "fcm", value: { serviceAccountJson: account.json } },
  });
});

describe("FCM sender against a misbehaving FCM and token endpoint", () => {
  it("gives every device exactly one outcome, whatever FCM answers", { timeout: fuzzTimeout(45_000) }, async () => {
    await assertProperty(
      fc.tuple(
        peerScript(fcmBodies(), tokenBodies()),
        fc.array(deviceToken, { minLength: 1, maxLength: 12 }),
        fc.constantFrom("", '{"k":"v"}', '{"n":1,"deep":{"x":[1,2]}}', "not json"),
      ),
      async ([script, tokens, dataJson]) => {
        peer.play(script);
        // A clock of its own that each pause moves on: a pause of any length is over at once.
        let skipped = 0;
        let longestPause = 0;
        const agent = new https.Agent({ keepAlive: true });
        const pool = new Http2Pool({ ...FUZZ_POOL, label: "FCM", maxConnections: 4 });
        const provider = new FcmProvider({
          fcmUrl: peer.origin,
          tokenUrlOverride: peer.tokenUrl,
          transport: pool,
          tokens: new OAuthTokenSource(httpsTokenEndpoint(agent, 1_000)),
          ceiling: { acquire: async () => undefined },
          log,
          now: () => Date.now() + skipped,
          sleep: (ms, signal) => {
            longestPause = Math.max(longestPause, ms);
            skipped += ms;
            return sleep(Math.min(ms, 5), signal);
          },
        });
        const check = () =>
          expect(longestPause, "a pause longer than the whole retry budget").toBeLessThanOrEqual(
            DEFAULT_RETRY_POLICY.maxElapsedMs,
          );
        const close = () => agent.destroy();
        await runExample(
          { provider, pool, check, close },
          { platform: Platform.ANDROID, credentials, tokens, dataJson },
          figures,
        );
      },
    );
  });
});
