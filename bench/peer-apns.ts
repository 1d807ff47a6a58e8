import apn from "@parse/node-apn";
import { apnsToken, runPeer, slidingWindow } from "./peer-kit.mjs";

// The APNs peer of bench/senders.ts and bench/e2e.ts: @parse/node-apn as its users run it.
// A Provider with its defaults (token auth, one HTTP/2 session, its own JWT), pointed at the
// sink with its documented `address` and `port` options; one Notification sent to an
// audience of distinct tokens with `send(note, tokens)`, `chunk` tokens a call and `calls`
// calls at once: node-apn puts every token of a call in flight, and its one session
// carries as many streams as the sink's SETTINGS allow (node:http2 holds the rest). A
// warm-up to other tokens of the audience before the parent's "go".

interface ApnsPeerConfig {
  host: string;
  port: number;
  p8: string;
  keyId: string;
  teamId: string;
  topic: string;
  /** The audience (bench/peer-kit.mjs apnsToken): devices 0 … n - 1, then the warm-up's. */
  seed: string;
  n: number;
  warm: number;
  title: string;
  body: string;
  /** Tokens per send() call (default 1,000). */
  chunk?: number;
  /** send() calls at once (default 2: the session never waits for the next call). */
  calls?: number;
}

await runPeer<ApnsPeerConfig>(async (config) => {
  const provider = new apn.Provider({
    token: { key: config.p8, keyId: config.keyId, teamId: config.teamId },
    address: config.host,
    port: config.port,
    production: true,
  });
  const note = new apn.Notification();
  note.alert = { title: config.title, body: config.body };
  note.sound = "default";
  note.topic = config.topic;
  note.pushType = "alert";
  note.priority = 10;
  const chunk = config.chunk ?? 1_000;
  const calls = config.calls ?? 2;
  const sendAll = async (from: number, n: number) => {
    let ok = 0;
    let failed = 0;
    let firstError: string | undefined;
    await slidingWindow(Math.ceil(n / chunk), calls, async (c) => {
      const tokens = Array.from({ length: Math.min(chunk, n - c * chunk) }, (_, i) =>
        apnsToken(config.seed, from + c * chunk + i),
      );
      const r = await provider.send(note, tokens);
      ok += r.sent.length;
      failed += r.failed.length;
      const f = r.failed[0];
      if (f) firstError ??= `${f.status ?? ""} ${JSON.stringify(f.response ?? f.error?.message ?? "")}`;
      return true;
    });
    return { ok, failed, ...(firstError ? { firstError } : {}) };
  };
  const warm = await sendAll(config.n, config.warm);
  if (warm.failed > 0) throw new Error(`warm-up: ${warm.failed} failed (${warm.firstError})`);
  return async () => {
    const result = await sendAll(0, config.n);
    await provider.shutdown();
    return result;
  };
});
