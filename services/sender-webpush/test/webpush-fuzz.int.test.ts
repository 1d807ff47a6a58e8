import { create } from "@bufbuild/protobuf";
import { Platform } from "@herald/proto/common";
import { GetSendCredentialsResponseSchema } from "@herald/proto/credential";
import fc from "fast-check";
import { describe, it } from "vitest";
import { makeVapidKeys } from "../../../test/support/credential-fixtures.js";
import { webSubscription } from "../../../test/support/device-tokens.js";
import { fuzzTimeout } from "../../../test/support/fuzz-settings.js";
import { peerScript } from "../../../test/support/h2-fuzz-scripts.js";
import { assertProperty, runExample, useFuzzPeer } from "../../../test/support/provider-fuzz.js";
import { PushTransport } from "../src/push-transport.js";
import { VapidSigner } from "../src/vapid.js";
import { WebPushProvider } from "../src/webpush-provider.js";

// The Web Push sender's provider and transport against a push service that answers as
// none should (test/support/h2-fuzz-peer.ts), driven by fast-check with a fixed seed: no
// crash, no unhandled rejection, and every device of every batch gets exactly one outcome.
// Push services answer with a status and headers only; bodies are read and dropped.

/** What push services put in a body (Herald reads none of it): their own JSON errors, HTML, nothing. */
const pushBodies = (): fc.Arbitrary<string> =>
  fc.constantFrom(
    "",
    '{"code":410,"errno":106,"error":"Gone","message":"expired subscription"}',
    "<html>413 Payload Too Large</html>",
    "x".repeat(2_000),
  );

const { peer, figures } = useFuzzPeer("Web Push provider", (seen) => ({
  "provider answers fuzzed": seen.streams + seen.tokens,
  "of them over HTTP/1.1": seen.tokens,
}));
const vapid = makeVapidKeys();
const credentials = create(GetSendCredentialsResponseSchema, {
  fingerprint: "fuzz",
  credentials: {
    case: "vapid",
    value: { publicKey: vapid.publicKey, privateKey: vapid.privateKey, subject: "mailto:fuzz@example.com" },
  },
});

describe("Web Push sender against a misbehaving push service", () => {
  it("gives every device exactly one outcome, whatever the push service answers", {
    timeout: fuzzTimeout(45_000),
  }, async () => {
    const subscription: fc.Arbitrary<string> = fc.oneof(
      { weight: 7, arbitrary: fc.constant(null).map(() => webSubscription(`${peer.origin}/push`).json) },
      // A push service without HTTP/2: the transport falls back to HTTP/1.1 for it.
      { weight: 2, arbitrary: fc.constant(null).map(() => webSubscription(`${peer.h1Origin}/push`).json) },
      { weight: 1, arbitrary: fc.constantFrom("", "{}", '{"endpoint":"https://127.0.0.1:1/x","keys":{}}') },
    );
    await assertProperty(
      fc.tuple(
        peerScript(pushBodies(), pushBodies()),
        fc.array(subscription, { minLength: 1, maxLength: 12 }),
        fc.constantFrom("", '{"k":"v"}', "x".repeat(5_000)),
      ),
      async ([script, tokens, dataJson]) => {
        peer.play(script);
        const transport = new PushTransport({
          allowPrivate: true,
          timeoutMs: 300,
          connectTimeoutMs: 2_000,
          pingIntervalMs: 0,
        });
        const provider = new WebPushProvider(transport, new VapidSigner(), { allowPrivate: true });
        await runExample(
          { provider, pool: transport },
          { platform: Platform.WEB, credentials, tokens, dataJson },
          figures,
        );
      },
    );
  });
});
