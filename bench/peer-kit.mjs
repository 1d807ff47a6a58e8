import { createHash } from "node:crypto";

// The child side of bench/senders.ts's peers (bench/peer-*.ts, bench/raw-h2.ts): plain
// Node, no loader, so that a peer's CPU time and memory are its library's and nothing
// else's. The parent passes the config in BENCH_PEER_CONFIG (JSON), waits for "ready",
// sends "go" and reads the result; it measures the process from outside (/proc).
//
// An audience's tokens are distinct and derived from a seed (apnsToken, fcmToken,
// webPushPath): the parent, the peer and the sink's docroot agree on them without passing
// a million of them through an environment variable. Device i < n is measured; devices
// n … n + warm - 1 are the warm-up's.

/**
 * Runs a peer: `prepare(config)` loads and sets up everything that is not sending and
 * resolves to the send loop; the loop runs on the parent's "go", and the process stays
 * until the parent has read its figures and disconnects.
 */
export async function runPeer(prepare) {
  const config = JSON.parse(process.env.BENCH_PEER_CONFIG ?? "{}");
  const send = (message) => new Promise((resolve) => process.send(message, () => resolve()));
  let loop;
  try {
    loop = await prepare(config);
  } catch (err) {
    await send({ type: "error", message: String(err?.stack ?? err) });
    process.exit(1);
  }
  process.once("message", async () => {
    const t0 = performance.now();
    try {
      const result = await loop();
      await send({ type: "done", seconds: (performance.now() - t0) / 1000, ...result });
    } catch (err) {
      await send({ type: "error", message: String(err?.stack ?? err) });
    }
  });
  process.once("disconnect", () => process.exit(0));
  await send({ type: "ready" });
}

/**
 * Sends `n` notifications with at most `concurrency` in flight: a new one starts as soon
 * as one ends. `sendOne(i)` resolves to true when the sink accepted it, otherwise to the
 * reason (the first one is kept).
 */
export async function slidingWindow(n, concurrency, sendOne) {
  let next = 0;
  let ok = 0;
  let failed = 0;
  let firstError;
  const worker = async () => {
    while (next < n) {
      const i = next++;
      let result;
      try {
        result = await sendOne(i);
      } catch (err) {
        result = String(err?.message ?? err);
      }
      if (result === true) ok++;
      else {
        failed++;
        firstError ??= String(result);
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, n) }, worker));
  return { ok, failed, firstError };
}

/** The i-th APNs device token of audience `seed` (8 hex digits): 32 bytes in hex, as Apple's. */
export function apnsToken(seed, i) {
  return `${seed}${i.toString(16).padStart(56, "0")}`;
}

/** The i-th FCM registration token of audience `seed`: instance id, colon, about 150 characters. */
export function fcmToken(seed, i) {
  return `${seed}${"I".repeat(14)}:APA91b${"b".repeat(130)}${i.toString(36).padStart(12, "0")}`;
}

/** The path of the i-th Web Push subscription's endpoint of audience `seed` (no leading slash). */
export function webPushPath(seed, i) {
  return `wp/${seed}-${i.toString(36)}`;
}

/**
 * The i-th Web Push subscription of audience `seed`: its own endpoint under `origin` and its
 * own auth secret; `p256dh` (a valid P-256 public key) shared, as in bench/e2e.ts's audiences.
 */
export function webPushSubscription(origin, seed, i, p256dh) {
  const auth = createHash("sha256").update(`${seed}-${i}`).digest().subarray(0, 16).toString("base64url");
  return { endpoint: `${origin}/${webPushPath(seed, i)}`, keys: { p256dh, auth } };
}
