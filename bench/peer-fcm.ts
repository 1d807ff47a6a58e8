import http2 from "node:http2";
import https from "node:https";
import tls from "node:tls";
import { initializeApp } from "firebase-admin/app";
import { getMessaging, type Message } from "firebase-admin/messaging";
import { fcmToken, runPeer, slidingWindow } from "./peer-kit.mjs";

// The FCM peer of bench/senders.ts: firebase-admin's messaging().sendEach. firebase-admin
// cannot be pointed at another host: `fcm.googleapis.com` is a constant of
// lib/messaging/messaging.js and no emulator variable covers FCM. Two ways in:
//
// - transport "h2", the SDK's default: sendEach opens its own session per call with
//   `http2.connect("https://fcm.googleapis.com", …)` and ignores AppOptions.httpAgent. This
//   process wraps node:http2's connect() before the SDK uses it: such a session gets a TLS
//   socket to the sink (createConnection, SNI "localhost"; the :authority stays
//   fcm.googleapis.com), and its requests get `:scheme: https`: firebase-admin sends
//   `https:` (the URL's protocol, colon included), which nghttp2 refuses as a
//   PROTOCOL_ERROR (RFC 9113 §8.3.1) where Google's front end lets it through.
// - transport "h1": the SDK's legacy HTTP/1.1 transport (enableLegacyHttpTransport), whose
//   requests go through AppOptions.httpAgent: a keep-alive https.Agent whose connections
//   open to the sink. No patching.
//
// Everything else (message validation and copy, sessions, token handling, response
// parsing) is firebase-admin's own. The OAuth token comes from a custom Credential (the
// SDK's public interface): google-auth-library posts to the constant oauth2.googleapis.com.
// An audience of distinct registration tokens (bench/peer-kit.mjs fcmToken), one Message
// per device as an application builds them, and a warm-up to other tokens before "go".

interface FcmPeerConfig {
  transport: "h2" | "h1";
  /** The sink: HTTP/2 for "h2", HTTP/1.1 for "h1". */
  host: string;
  port: number;
  projectId: string;
  /** The audience: devices 0 … n - 1, then the warm-up's. */
  seed: string;
  warm: number;
  title: string;
  body: string;
  n: number;
  /** Messages per sendEach call. */
  chunk: number;
  /** sendEach calls in flight at once (chunk × calls = the concurrency budget). */
  calls: number;
}

const FCM_ORIGIN = "https://fcm.googleapis.com";

await runPeer<FcmPeerConfig>(async (config) => {
  const toSink = (alpn: string) => () =>
    tls.connect({ host: config.host, port: config.port, servername: "localhost", ALPNProtocols: [alpn] });
  let httpAgent: https.Agent | undefined;
  if (config.transport === "h2") {
    const connect = http2.connect;
    const redirected = (authority: string | URL, options?: http2.SecureClientSessionOptions, listener?: () => void) => {
      if (new URL(String(authority)).origin !== FCM_ORIGIN) return connect(authority, options, listener);
      const session = connect(authority, { ...options, createConnection: toSink("h2") }, listener);
      const request = session.request.bind(session);
      return Object.assign(session, {
        request: (headers: http2.OutgoingHttpHeaders, opts?: http2.ClientSessionRequestOptions) =>
          request({ ...headers, ":scheme": "https" }, opts),
      });
    };
    Object.assign(http2, { connect: redirected });
  } else {
    httpAgent = new https.Agent({ keepAlive: true, maxSockets: config.chunk * config.calls });
    Object.assign(httpAgent, { createConnection: toSink("http/1.1") });
  }
  const app = initializeApp({
    projectId: config.projectId,
    credential: { getAccessToken: async () => ({ access_token: "bench-access-token", expires_in: 3600 }) },
    ...(httpAgent ? { httpAgent } : {}),
  });
  const messaging = getMessaging(app);
  if (config.transport === "h1") messaging.enableLegacyHttpTransport();
  const message = (i: number): Message => ({
    token: fcmToken(config.seed, i),
    notification: { title: config.title, body: config.body },
    android: { priority: "normal" },
  });
  const sendAll = async (from: number, n: number) => {
    let ok = 0;
    let failed = 0;
    let firstError: string | undefined;
    // A window over the calls: each sends `chunk` messages (the last one what is left).
    await slidingWindow(Math.ceil(n / config.chunk), config.calls, async (c) => {
      const size = Math.min(config.chunk, n - c * config.chunk);
      const res = await messaging.sendEach(
        Array.from({ length: size }, (_, i) => message(from + c * config.chunk + i)),
      );
      ok += res.successCount;
      failed += res.failureCount;
      if (res.failureCount > 0) firstError ??= res.responses.find((r) => !r.success)?.error?.message;
      return true;
    });
    return { ok, failed, ...(firstError ? { firstError } : {}) };
  };
  const warm = await sendAll(config.n, config.warm);
  if (warm.failed > 0) throw new Error(`warm-up: ${warm.failed} failed (${warm.firstError})`);
  return () => sendAll(0, config.n);
});
