import https from "node:https";
import webpush, { type PushSubscription } from "web-push";
import { runPeer, slidingWindow } from "./peer-kit.mjs";

// The Web Push peer of bench/senders.ts: web-push's sendNotification, which encrypts
// every message (RFC 8291 aes128gcm: a fresh ECDH key pair and salt each), signs a VAPID
// JWT for every message and POSTs over HTTP/1.1 (https.request). Keep-alive agent with one
// socket per message in flight, at most `concurrency` in flight.

interface WebPushPeerConfig {
  subscription: PushSubscription;
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
  return async () => {
    const result = await slidingWindow(config.n, config.concurrency, async () => {
      const r = await webpush.sendNotification(config.subscription, config.payload, options);
      return r.statusCode >= 200 && r.statusCode < 300 ? true : `HTTP ${r.statusCode}`;
    });
    agent.destroy();
    return result;
  };
});
