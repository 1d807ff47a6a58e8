import https from "node:https";
import webpush from "web-push";
import { runPeer, slidingWindow, webPushSubscription } from "./peer-kit.mjs";

// The Web Push peer of bench/senders.ts: web-push's sendNotification, which encrypts
// every message (RFC 8291 aes128gcm: a fresh ECDH key pair and salt each), signs a VAPID
// JWT for every message and POSTs over HTTP/1.1 (https.request). Keep-alive agent with one
// socket per message in flight, at most `concurrency` in flight. An audience of distinct
// subscriptions (bench/peer-kit.mjs webPushSubscription), a warm-up to others before "go".

interface WebPushPeerConfig {
  /** Where the subscriptions' endpoints are (HTTP/1.1). */
  origin: string;
  /** The audience: devices 0 … n - 1, then the warm-up's. */
  seed: string;
  p256dh: string;
  warm: number;
  vapid: { subject: string; publicKey: string; privateKey: string };
  payload: string;
  ttl: number;
  n: number;
  concurrency: number;
}

await runPeer<WebPushPeerConfig>(async (config) => {
  const agent = new https.Agent({ keepAlive: true, maxSockets: config.concurrency });
  const options = {
    vapidDetails: config.vapid,
    TTL: config.ttl,
    urgency: "normal" as const,
    contentEncoding: "aes128gcm" as const,
    agent,
  };
  const sendAll = (from: number, n: number) =>
    slidingWindow(n, config.concurrency, async (i) => {
      const subscription = webPushSubscription(config.origin, config.seed, from + i, config.p256dh);
      const r = await webpush.sendNotification(subscription, config.payload, options);
      return r.statusCode >= 200 && r.statusCode < 300 ? true : `HTTP ${r.statusCode}`;
    });
  const warm = await sendAll(config.n, config.warm);
  if (warm.failed > 0) throw new Error(`warm-up: ${warm.failed} failed (${warm.firstError})`);
  return async () => {
    const result = await sendAll(0, config.n);
    agent.destroy();
    return result;
  };
});
