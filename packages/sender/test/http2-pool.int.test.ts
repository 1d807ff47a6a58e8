import http2, { type Http2Session, type ServerHttp2Stream } from "node:http2";
import https from "node:https";
import net, { type AddressInfo } from "node:net";
import tls from "node:tls";
import { afterEach, describe, expect, it } from "vitest";
import { ensureCertificates } from "@herald/provider-sim/ca";
import { DEFAULT_CERT_DIR } from "@herald/provider-sim/config";
import { Http2Pool, isNoH2, type Http2PoolOptions, type Http2Response } from "../src/http2-pool.js";
import type { Limiter } from "../src/limiter.js";
import { QUEUED_SENDS, SendSlots } from "../src/send-slots.js";
import { waitUntil } from "../../../test/support/wait.js";

// The shared pool against a real HTTP/2 peer on loopback that misbehaves on purpose:
// stream limits, GOAWAY mid-flight, refused and reset streams, silence, a dead network.
// The peer serves the simulator's certificate, whose CA the test workers trust
// (NODE_EXTRA_CA_CERTS), as every sender trusts a provider's.

type Handler = (stream: ServerHttp2Stream, id: string, session: Http2Session) => void;

interface Peer {
  origin: string;
  port: number;
  /** Per connection: most streams open at once, most before the first answer, and PINGs received (each answered). */
  sessions: { max: number; maxBeforeTrust: number; pings: number }[];
  processed: string[];
  close(): Promise<void>;
}

async function peer(handler: Handler, settings: http2.Settings = { maxConcurrentStreams: 8 }): Promise<Peer> {
  const certs = await ensureCertificates(DEFAULT_CERT_DIR);
  const server = http2.createSecureServer({ key: certs.serverKey, cert: certs.serverCert, settings });
  const sessions: Peer["sessions"] = [];
  const processed: string[] = [];
  const open = new Set<Http2Session>();
  server.on("session", (session) => {
    const s = { max: 0, maxBeforeTrust: 0, pings: 0 };
    sessions.push(s);
    session.on("ping", () => s.pings++);
    open.add(session);
    session.once("close", () => open.delete(session));
    session.on("error", () => undefined); // cut connections below are on purpose
    let active = 0;
    let answered = false;
    session.on("stream", (stream: ServerHttp2Stream, headers) => {
      active++;
      s.max = Math.max(s.max, active);
      if (!answered) s.maxBeforeTrust = Math.max(s.maxBeforeTrust, active);
      stream.once("close", () => active--);
      stream.on("error", () => undefined); // the resets below are on purpose
      const respond = stream.respond.bind(stream);
      stream.respond = (...args: Parameters<typeof respond>) => {
        answered = true;
        processed.push(String(headers["x-id"]));
        respond(...args);
      };
      stream.resume();
      stream.once("end", () => handler(stream, String(headers["x-id"]), session));
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const port = (server.address() as AddressInfo).port;
  return {
    origin: `https://127.0.0.1:${port}`,
    port,
    sessions,
    processed,
    close: async () => {
      for (const s of open) s.destroy();
      await new Promise((r) => server.close(r));
    },
  };
}

/**
 * Node 20's HTTP/2 server corrupted its heap now and then when it sent GOAWAY or was
 * destroyed from inside a stream's event handlers with other streams open (seen as
 * "malloc(): mismatching next->prev_size" aborts of this test's worker; the client
 * side was never the one to crash). Its faults are therefore started a tick later.
 */
const later = (fn: () => void) => setImmediate(fn);

const ok =
  (delayMs = 0, body = ""): Handler =>
  (stream) => {
    setTimeout(() => {
      if (stream.closed || stream.destroyed || stream.session?.destroyed !== false) return;
      stream.respond({ ":status": 200 });
      stream.end(body);
    }, delayMs);
  };

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const BASE: Http2PoolOptions = {
  label: "test peer",
  maxConnections: 3,
  maxQueued: 10_000,
  requestTimeoutMs: 5_000,
  connectTimeoutMs: 5_000,
  idleTimeoutMs: 60_000,
  pingIntervalMs: 0,
  accepted: (status) => status === 200,
};

function pool(opts: Partial<Http2PoolOptions> = {}): Http2Pool {
  const p = new Http2Pool({ ...BASE, ...opts });
  cleanups.push(() => p.close());
  return p;
}

function setup(p: Peer, opts: Partial<Http2PoolOptions> = {}) {
  cleanups.push(() => p.close());
  const client = pool(opts);
  const signal = new AbortController().signal;
  const send = (id: string | number, s = signal, origin = p.origin): Promise<Http2Response> =>
    client.request(
      { origin, group: "TEAM.KEY" },
      { path: "/3/device/ab", headers: { "x-id": String(id) }, body: Buffer.from("{}") },
      s,
    );
  return { pool: client, send };
}

const range = (n: number) => Array.from({ length: n }, (_, i) => i);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const until = (condition: () => boolean, timeoutMs = 3_000): Promise<void> =>
  waitUntil("a pool condition", condition, timeoutMs, 10);

/** A TCP relay that can turn into a black hole: the peer looks alive to the kernel but says nothing. */
async function relay(port: number) {
  let dead = false;
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect(port, "127.0.0.1");
    for (const [from, to] of [
      [client, upstream],
      [upstream, client],
    ] as const) {
      sockets.add(from);
      from.on("data", (d) => void (dead || to.write(d)));
      from.on("error", () => undefined);
      from.on("close", () => to.destroy());
    }
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  cleanups.push(async () => {
    for (const s of sockets) s.destroy();
    await new Promise((r) => server.close(r));
  });
  return {
    origin: `https://127.0.0.1:${(server.address() as AddressInfo).port}`,
    setDead: (v: boolean) => void (dead = v),
  };
}

describe("Http2Pool", () => {
  it("never opens more streams than the peer allows, and one until the first accepted answer", async () => {
    const p = await peer(ok(5));
    const { send, pool } = setup(p);
    const answers = await Promise.all(range(300).map((i) => send(i)));
    expect(answers.every((a) => a.status === 200)).toBe(true);
    expect(p.sessions.length).toBeGreaterThan(0);
    expect(p.sessions.length).toBeLessThanOrEqual(3);
    for (const s of p.sessions) {
      expect(s.max).toBeLessThanOrEqual(8);
      expect(s.maxBeforeTrust).toBe(1);
    }
    expect(Math.max(...p.sessions.map((s) => s.max))).toBe(8);
    expect(pool.stats()).toMatchObject({ streams: 0, queued: 0 });
  });

  it("without an acceptance rule, uses the peer's SETTINGS from the first stream, capped by maxStreamsPerConnection", async () => {
    const p = await peer(ok(5), { maxConcurrentStreams: 50 });
    const { send } = setup(p, { accepted: undefined, maxConnections: 2 });
    await Promise.all(range(200).map((i) => send(i)));
    expect(p.sessions.length).toBeLessThanOrEqual(2);
    expect(p.sessions[0]!.maxBeforeTrust).toBe(50);
    for (const s of p.sessions) expect(s.max).toBeLessThanOrEqual(50);

    const q = await peer(ok(5), { maxConcurrentStreams: 50 });
    const capped = setup(q, { accepted: undefined, maxConnections: 1, maxStreamsPerConnection: 10 });
    await Promise.all(range(100).map((i) => capped.send(i)));
    expect(q.sessions).toHaveLength(1);
    expect(q.sessions[0]!.max).toBe(10);
  });

  it("uses more streams once the peer raises its limit (as APNs does after a valid token)", async () => {
    const raised = new WeakSet<Http2Session>();
    const p = await peer(
      (stream, _id, session) => {
        if (!raised.has(session)) session.settings({ maxConcurrentStreams: 20 });
        raised.add(session);
        ok(5)(stream, _id, session);
      },
      { maxConcurrentStreams: 1 },
    );
    const { send } = setup(p, { maxConnections: 1 });
    await Promise.all(range(100).map((i) => send(i)));
    expect(p.sessions).toHaveLength(1);
    expect(p.sessions[0]!.max).toBe(20);
  });

  it("counts its stream capacity from the peer's SETTINGS, one until trusted, and tells its watchers", async () => {
    const p = await peer(ok(5), { maxConcurrentStreams: 40 });
    const { send, pool } = setup(p, { maxConnections: 1 });
    const seen: number[] = [];
    pool.watchCapacity(() => seen.push(pool.streamCapacity()));
    expect(pool.streamCapacity()).toBe(0);
    await send("first");
    expect(pool.streamCapacity()).toBe(40);
    // Open (1 stream until an accepted answer), then trusted: the peer's 40.
    expect(seen).toEqual([1, 40]);
    await pool.close();
    expect(pool.streamCapacity()).toBe(0);
  });

  it("follows a lowered SETTINGS limit at once: no new stream beyond it, capacity down", async () => {
    let lowered = false;
    const p = await peer(
      (stream, id, session) => {
        if (id === "lower") {
          // As APNs may: fewer streams from now on, while the connection stays.
          session.settings({ maxConcurrentStreams: 3 }, () => void (lowered = true));
        }
        ok(10)(stream, id, session);
      },
      { maxConcurrentStreams: 30 },
    );
    const { send, pool } = setup(p, { accepted: undefined, maxConnections: 1 });
    await Promise.all(range(100).map((i) => send(i)));
    expect(p.sessions[0]!.max).toBe(30);
    expect(pool.streamCapacity()).toBe(30);
    await send("lower");
    await until(() => lowered && pool.streamCapacity() === 3);
    p.sessions[0]!.max = 0;
    await Promise.all(range(60).map((i) => send(`after-${i}`)));
    expect(p.sessions).toHaveLength(1);
    expect(p.sessions[0]!.max).toBe(3);
  });

  it("opens another connection only once every open one's streams are in use, up to maxConnections", async () => {
    const p = await peer(ok(30), { maxConcurrentStreams: 5 });
    const { send, pool } = setup(p, { accepted: undefined, maxConnections: 3 });
    // Within one connection's streams: one connection.
    await Promise.all(range(5).map((i) => send(i)));
    expect(p.sessions).toHaveLength(1);
    // Beyond them: more, never more than three, each within the peer's limit.
    const running = Promise.all(range(40).map((i) => send(`more-${i}`)));
    await until(() => pool.streamCapacity() === 15);
    await running;
    expect(p.sessions).toHaveLength(3);
    for (const s of p.sessions) expect(s.max).toBeLessThanOrEqual(5);
    expect(pool.stats()).toMatchObject({ streams: 0, queued: 0 });
  });

  /** A sender's sends through `slots` and the pool: take a slot, send, give it back; the most held and queued. */
  async function sendThrough(p: Peer, client: Http2Pool, slots: Limiter, n: number) {
    const signal = new AbortController().signal;
    let mostHeld = 0;
    let mostQueued = 0;
    await Promise.all(
      range(n).map(async (i) => {
        await slots.acquire();
        mostHeld = Math.max(mostHeld, slots.holders);
        try {
          await client.request(
            { origin: p.origin },
            { path: "/", headers: { "x-id": String(i) }, body: Buffer.alloc(0) },
            signal,
          );
          mostQueued = Math.max(mostQueued, client.stats().queued);
        } finally {
          slots.release();
        }
      }),
    );
    return { mostHeld, mostQueued };
  }

  it("grows a sender's send slots to the streams its connections carry while the loop has time, the queue bounded", async () => {
    const p = await peer(ok(40), { maxConcurrentStreams: 200 });
    cleanups.push(() => p.close());
    const client = pool({ accepted: undefined, maxConnections: 2, maxQueued: 10_000 });
    // The event loop never busy: a far provider's round trip is what holds sends back.
    const slots = new SendSlots(10_000, client, () => 0, 10);
    cleanups.push(async () => slots.stop());
    expect(slots.size).toBe(QUEUED_SENDS);
    const { mostHeld, mostQueued } = await sendThrough(p, client, slots, 4_000);
    // Both connections filled to the peer's limit: 400 in flight, not a constant 256.
    expect(p.sessions).toHaveLength(2);
    expect(Math.max(...p.sessions.map((s) => s.max))).toBe(200);
    expect(slots.size).toBe(400 + QUEUED_SENDS);
    // Never more held than the streams plus the margin; never more waiting in the pool than the margin.
    expect(mostHeld).toBeLessThanOrEqual(400 + QUEUED_SENDS);
    expect(mostQueued).toBeLessThanOrEqual(QUEUED_SENDS);
  });

  it("keeps a sender's send slots where they are while its event loop is busy, and within SENDER_MAX_IN_FLIGHT", async () => {
    const p = await peer(ok(20), { maxConcurrentStreams: 200 });
    cleanups.push(() => p.close());
    const client = pool({ accepted: undefined, maxConnections: 2, maxQueued: 10_000 });
    // A provider that answers at once, a process that is the limit: more in flight would only wait.
    const busy = new SendSlots(10_000, client, () => 1, 10);
    cleanups.push(async () => busy.stop());
    const { mostHeld } = await sendThrough(p, client, busy, 2_000);
    expect(busy.size).toBe(QUEUED_SENDS);
    expect(mostHeld).toBe(QUEUED_SENDS);
    // The cap bounds the slots whatever the peer allows and the loop says.
    const capped = new SendSlots(300, client, () => 0, 10);
    cleanups.push(async () => capped.stop());
    await sendThrough(p, client, capped, 2_000);
    expect(capped.size).toBe(300);
  });

  it.each([
    ["NO_ERROR", http2.constants.NGHTTP2_NO_ERROR],
    ["ENHANCE_YOUR_CALM", http2.constants.NGHTTP2_ENHANCE_YOUR_CALM],
  ])(
    "re-sends only the streams above a GOAWAY's (%s) last stream id, on a new connection, each processed once",
    async (_name, code) => {
      let held: { stream: ServerHttp2Stream; id: string }[] = [];
      let phase: "trust" | "hold" | "normal" = "trust";
      const p = await peer((stream, id, session) => {
        if (phase === "trust") {
          phase = "hold";
          return ok()(stream, id, session);
        }
        if (phase === "normal") return ok()(stream, id, session);
        held.push({ stream, id });
        if (held.length < 6) return;
        phase = "normal";
        const last = held[1]!.stream.id!;
        const all = held;
        held = [];
        later(() => {
          session.goaway(code, last, Buffer.from(JSON.stringify({ reason: "Shutdown" })));
          for (const h of all) {
            if (h.stream.id! <= last) ok()(h.stream, h.id, session);
            else h.stream.close(http2.constants.NGHTTP2_REFUSED_STREAM);
          }
        });
      });
      const { send } = setup(p, { maxConnections: 1 });
      await send("first");
      const settled = await Promise.allSettled(range(6).map((i) => send(i)));
      expect(p.sessions.length).toBe(2);
      // Streams the peer never processed came through on the new connection, once each.
      expect(settled.slice(2).map((s) => s.status)).toEqual(Array(4).fill("fulfilled"));
      expect([...p.processed].sort()).toEqual(["0", "1", "2", "3", "4", "5", "first"]);
      // Streams at or below the last id were processed; a graceful GOAWAY lets their answers arrive.
      if (code === http2.constants.NGHTTP2_NO_ERROR)
        expect(settled.slice(0, 2).map((s) => s.status)).toEqual(["fulfilled", "fulfilled"]);
      // A forced one cuts them: they fail (the caller retries), never re-sent by the pool.
      else expect(settled.slice(0, 2).map((s) => s.status)).toEqual(["rejected", "rejected"]);
    },
  );

  it("re-sends refused streams transparently", async () => {
    const refused = new Set<string>();
    const p = await peer((stream, id, session) => {
      // Every third request is refused on its first two tries.
      const tries = [...refused].filter((r) => r.startsWith(`${id}:`)).length;
      if (Number(id) % 3 === 0 && tries < 2) {
        refused.add(`${id}:${tries}`);
        later(() => stream.close(http2.constants.NGHTTP2_REFUSED_STREAM));
      } else ok()(stream, id, session);
    });
    const { send } = setup(p);
    const answers = await Promise.all(range(60).map((i) => send(i)));
    expect(answers.every((a) => a.status === 200)).toBe(true);
    expect(p.processed.sort()).toEqual(range(60).map(String).sort());
    expect(refused.size).toBe(40);
  });

  it("gives up re-sending a stream the peer keeps refusing", async () => {
    const p = await peer((stream) => later(() => stream.close(http2.constants.NGHTTP2_REFUSED_STREAM)));
    const { send } = setup(p);
    await expect(send(1)).rejects.toMatchObject({ code: "ERR_HTTP2_STREAM_ERROR" });
  });

  it("reports a stream reset after the peer took it as an error, for the caller to retry", async () => {
    const p = await peer((stream) => later(() => stream.close(http2.constants.NGHTTP2_INTERNAL_ERROR)));
    const { send } = setup(p);
    await expect(send(1)).rejects.toMatchObject({ code: "ERR_HTTP2_STREAM_ERROR" });
  });

  it("survives a connection cut mid-flight: answered requests resolve, the rest fail for a retry", async () => {
    let n = 0;
    const p = await peer((stream, id, session) => {
      if (++n === 10) later(() => session.destroy());
      else ok(2)(stream, id, session);
    });
    const { send } = setup(p, { maxConnections: 1 });
    const settled = await Promise.allSettled(range(40).map((i) => send(i)));
    const failed = settled.filter((s) => s.status === "rejected");
    expect(failed.length).toBeGreaterThan(0);
    expect(settled.filter((s) => s.status === "fulfilled").length + failed.length).toBe(40);
    // The pool recovers: a new connection serves the next requests.
    expect((await send("after")).status).toBe(200);
  });

  it("times out a request the peer never answers with a retryable error, and stops using that connection", async () => {
    let silent = true;
    const p = await peer((stream, id, session) => {
      if (!silent) ok()(stream, id, session);
    });
    const { send } = setup(p, { requestTimeoutMs: 100 });
    const started = Date.now();
    const err = await send(1).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: "ETIMEDOUT", name: "Http2PoolError" });
    expect((err as Error).message).not.toContain("/3/device");
    expect(Date.now() - started).toBeLessThan(1_000);
    silent = false;
    expect((await send(2)).status).toBe(200);
    expect(p.sessions).toHaveLength(2);
  });

  it("counts the time a request waits for a stream toward its timeout", async () => {
    const p = await peer(() => undefined, { maxConcurrentStreams: 1 });
    const { send } = setup(p, { requestTimeoutMs: 150, maxConnections: 1, accepted: undefined });
    const started = Date.now();
    const settled = await Promise.allSettled([send(1), send(2)]);
    expect(settled.map((s) => s.status === "rejected" && (s.reason as { code: string }).code)).toEqual([
      "ETIMEDOUT",
      "ETIMEDOUT",
    ]);
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(p.processed).toEqual([]);
  });

  it("gives up on a connection that never completes its handshake (connect timeout)", async () => {
    // A listener that accepts TCP and never speaks: the TLS handshake hangs.
    const mute = net.createServer(() => undefined);
    await new Promise<void>((r) => mute.listen(0, "127.0.0.1", r));
    const sockets = new Set<net.Socket>();
    mute.on("connection", (s) => sockets.add(s));
    cleanups.push(async () => {
      for (const s of sockets) s.destroy();
      await new Promise((r) => mute.close(r));
    });
    const client = pool({ maxConnections: 1, maxQueued: 10, connectTimeoutMs: 100, requestTimeoutMs: 10_000 });
    const target = { origin: `https://127.0.0.1:${(mute.address() as AddressInfo).port}`, group: "g" };
    const started = Date.now();
    await expect(
      client.request(target, { path: "/", headers: {}, body: Buffer.alloc(0) }, new AbortController().signal),
    ).rejects.toMatchObject({ code: "ETIMEDOUT" });
    // Three connections in a row failed before the queued request was given up.
    expect(sockets.size).toBe(3);
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it("PING keep-alive keeps a healthy idle connection and closes one whose peer went silent", async () => {
    const p = await peer(ok());
    cleanups.push(() => p.close());
    const net_ = await relay(p.port);
    const client = pool({ pingIntervalMs: 50, pingTimeoutMs: 150, requestTimeoutMs: 10_000, maxConnections: 1 });
    const signal = new AbortController().signal;
    const send = (id: string) =>
      client.request({ origin: net_.origin }, { path: "/", headers: { "x-id": id }, body: Buffer.alloc(0) }, signal);

    await send("a");
    await until(() => (p.sessions[0]?.pings ?? 0) >= 3); // several PINGs, each answered
    await send("b");
    expect(p.sessions).toHaveLength(1);

    net_.setDead(true);
    const started = Date.now();
    // The request is swallowed; the unanswered PING, not the 10 s request timeout, ends it.
    await expect(send("c")).rejects.toMatchObject({ code: "ERR_HTTP2_PING_TIMEOUT" });
    expect(Date.now() - started).toBeLessThan(2_000);
    await until(() => client.stats().connections === 0);

    net_.setDead(false);
    expect((await send("d")).status).toBe(200);
    expect(p.sessions).toHaveLength(2);
    expect(p.processed).toEqual(["a", "b", "d"]);
  });

  it("closes idle connections, and their origin's pool with them", async () => {
    const p = await peer(ok());
    const { send, pool } = setup(p, { idleTimeoutMs: 100 });
    await send(1);
    expect(pool.stats()).toMatchObject({ origins: 1, connections: 1 });
    await until(() => pool.stats().connections === 0);
    expect(pool.stats()).toMatchObject({ origins: 0, connections: 0, streams: 0, queued: 0 });
    expect((await send(2)).status).toBe(200);
    expect(p.sessions).toHaveLength(2);
  });

  it("bounds the origins it keeps: an idle one is closed for a new one, busy ones are not", async () => {
    const peers = await Promise.all([peer(ok()), peer(ok(300)), peer(ok(300)), peer(ok())]);
    for (const p of peers) cleanups.push(() => p.close());
    const client = pool({ maxOrigins: 2, accepted: undefined });
    const signal = new AbortController().signal;
    const send = (p: Peer) =>
      client.request({ origin: p.origin }, { path: "/", headers: {}, body: Buffer.alloc(0) }, signal);
    await send(peers[0]!);
    const slow = send(peers[1]!);
    expect(client.stats().origins).toBe(2);
    // peers[0]'s pool is idle: it makes room.
    const slow2 = send(peers[2]!);
    expect(client.stats().origins).toBe(2);
    // Both pools are busy: no room for a fourth origin.
    await expect(send(peers[3]!)).rejects.toMatchObject({ code: "ERR_HTTP2_POOL_ORIGINS_FULL" });
    expect((await slow).status).toBe(200);
    expect((await slow2).status).toBe(200);
    expect((await send(peers[3]!)).status).toBe(200);
  });

  it.each([
    ["refuses h2 by ALPN", "alert"],
    ["negotiates no protocol", "none"],
  ])("fails at once, with one connection attempt, when the origin %s", async (_name, kind) => {
    const certs = await ensureCertificates(DEFAULT_CERT_DIR);
    const tlsOptions = { key: certs.serverKey, cert: certs.serverCert };
    // An HTTP/1.1 server answers h2-only ALPN with a TLS alert; a bare TLS server just picks nothing.
    const server =
      kind === "alert" ? https.createServer(tlsOptions, (_req, res) => res.end()) : tls.createServer(tlsOptions);
    const sockets = new Set<net.Socket>();
    server.on("connection", (s: net.Socket) => sockets.add(s));
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    cleanups.push(async () => {
      for (const s of sockets) s.destroy();
      await new Promise((r) => server.close(() => r(undefined)));
    });
    const client = pool();
    const err = await client
      .request(
        { origin: `https://127.0.0.1:${(server.address() as AddressInfo).port}` },
        { path: "/", headers: {}, body: Buffer.alloc(0) },
        new AbortController().signal,
      )
      .catch((e: unknown) => e);
    expect(isNoH2(err)).toBe(true);
    expect(sockets.size).toBe(1);
  });

  it("drops a queued request when its signal aborts, and cancels a running one at once", async () => {
    const p = await peer(ok(100));
    const { send } = setup(p, { maxConnections: 1 });
    const abort = new AbortController();
    const first = send(1);
    const second = send(2, abort.signal);
    abort.abort(new Error("stop"));
    await expect(second).rejects.toThrow("stop");
    expect((await first).status).toBe(200);
    expect(p.processed).toEqual(["1"]);

    const running = new AbortController();
    const third = send(3, running.signal);
    await sleep(30);
    const started = Date.now();
    running.abort(new Error("shutting down"));
    await expect(third).rejects.toThrow("shutting down");
    expect(Date.now() - started).toBeLessThan(50);
  });

  it("fails queued requests when connections cannot be opened, and refuses beyond the queue bound", async () => {
    const p = await peer(ok());
    const origin = p.origin;
    await p.close();
    const client = pool({ maxConnections: 2, maxQueued: 2, requestTimeoutMs: 1_000 });
    const target = { origin, group: "g" };
    const req = () => ({ path: "/", headers: {}, body: Buffer.alloc(0) });
    const signal = new AbortController().signal;
    const queued = [client.request(target, req(), signal), client.request(target, req(), signal)];
    await expect(client.request(target, req(), signal)).rejects.toMatchObject({ code: "ERR_HTTP2_POOL_QUEUE_FULL" });
    for (const q of queued) await expect(q).rejects.toMatchObject({ code: "ECONNREFUSED" });
  });

  it("retire() moves later requests to a new connection", async () => {
    const p = await peer(ok());
    const { send } = setup(p, { maxConnections: 1 });
    const first = await send(1);
    first.retire("TooManyProviderTokenUpdates");
    await send(2);
    expect(p.sessions).toHaveLength(2);
  });

  it("returns the answer's body up to maxResponseBytes, and fails new requests once closed", async () => {
    const p = await peer(ok(0, JSON.stringify({ reason: "BadDeviceToken" })));
    const { send, pool } = setup(p);
    expect((await send(1)).body).toBe('{"reason":"BadDeviceToken"}');
    await pool.close();
    await expect(send(2)).rejects.toMatchObject({ code: "ERR_HTTP2_POOL_CLOSED" });
  });
});
