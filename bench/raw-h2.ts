import http2, { type ClientHttp2Session } from "node:http2";
import { runPeer, slidingWindow } from "./peer-kit.mjs";

// The floor of bench/senders.ts: bare `node:http2`, the request a sender would send built
// once (headers and body), `sessions` sessions, at most `concurrency` streams in flight.
// Run by plain Node (type stripping), like the other peers.

interface RawConfig {
  origin: string;
  path: string;
  headers: Record<string, string>;
  body: string;
  n: number;
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
  let sessions: ClientHttp2Session[] = [];
  return async () => {
    // Connecting is part of the run, as it is for every other side.
    sessions = await Promise.all(Array.from({ length: config.sessions }, () => connect(config.origin)));
    const result = await slidingWindow(
      config.n,
      config.concurrency,
      (i) =>
        new Promise((resolve) => {
          const req = sessions[i % sessions.length]!.request(headers);
          let status = 0;
          req.on("response", (h) => (status = Number(h[":status"])));
          req.on("data", () => {});
          req.on("end", () => resolve(status >= 200 && status < 300 ? true : `HTTP ${status}`));
          req.on("error", (err) => resolve(err.message));
          req.end(body);
        }),
    );
    for (const s of sessions) s.close();
    return result;
  };
});
