import http2, { type ClientHttp2Session } from "node:http2";
import { apnsToken, runPeer, slidingWindow, webPushPath } from "./peer-kit.mjs";

// The floor of bench/senders.ts: bare `node:http2`, the request a sender would send built
// once (headers and body; the path per device for APNs and Web Push, whose devices differ
// by path), `sessions` sessions, at most `concurrency` streams in flight. Sessions open
// and a warm-up runs before the parent's "go". Run by plain Node (type stripping), like
// the other peers.

interface RawConfig {
  origin: string;
  path: string;
  /** Devices by path (bench/peer-kit.mjs): device i < n measured, the warm-up's after. */
  devices?: { kind: "apns" | "webpush"; seed: string };
  headers: Record<string, string>;
  body: string;
  n: number;
  warm: number;
  concurrency: number;
  sessions: number;
}

function connect(origin: string): Promise<ClientHttp2Session> {
  return new Promise((resolve, reject) => {
    const session = http2.connect(origin);
    session.once("connect", () => resolve(session));
    session.once("error", reject);
  });
}

await runPeer<RawConfig>(async (config) => {
  const body = Buffer.from(config.body, "base64");
  const headers = {
    ...config.headers,
    ":method": "POST",
    ":path": config.path,
    "content-length": String(body.length),
  };
  const devices = config.devices;
  const pathOf = (i: number) =>
    !devices
      ? config.path
      : devices.kind === "apns"
        ? `/3/device/${apnsToken(devices.seed, i)}`
        : `/${webPushPath(devices.seed, i)}`;
  const sessions = await Promise.all(Array.from({ length: config.sessions }, () => connect(config.origin)));
  const sendAll = (from: number, n: number) =>
    slidingWindow(
      n,
      config.concurrency,
      (i) =>
        new Promise((resolve) => {
          const req = sessions[i % sessions.length]!.request({ ...headers, ":path": pathOf(from + i) });
          let status = 0;
          req.on("response", (h) => (status = Number(h[":status"])));
          req.on("data", () => {});
          req.on("end", () => resolve(status >= 200 && status < 300 ? true : `HTTP ${status}`));
          req.on("error", (err) => resolve(err.message));
          req.end(body);
        }),
    );
  const warm = await sendAll(config.n, config.warm);
  if (warm.failed > 0) throw new Error(`warm-up: ${warm.failed} failed (${warm.firstError})`);
  return async () => {
    const result = await sendAll(0, config.n);
    for (const s of sessions) s.close();
    return result;
  };
});
