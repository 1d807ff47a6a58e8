import http2 from "node:http2";
import type { AddressInfo } from "node:net";
import { afterEach, expect, it } from "vitest";
import { GoawaySafeSessionManager } from "./rpc-client.js";

let server: http2.Http2Server | undefined;
afterEach(() => new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve())));

/** A server that answers 200 and sends GOAWAY (NO_ERROR) once the first stream of a connection is done. */
async function goawayAfterFirstStream(): Promise<string> {
  server = http2.createServer();
  server.on("stream", (stream) => {
    const session = stream.session!;
    stream.respond({ ":status": 200 });
    stream.end("ok");
    stream.once("close", () => session.goaway(http2.constants.NGHTTP2_NO_ERROR));
  });
  await new Promise<void>((resolve) => server!.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

async function statusOf(stream: http2.ClientHttp2Stream): Promise<number> {
  const status = new Promise<number>((resolve) => stream.once("response", (h) => resolve(Number(h[":status"]))));
  stream.resume();
  stream.end();
  return status;
}

it("a request made between a GOAWAY on an idle connection and its close reconnects, and the late error crashes nothing", async () => {
  const manager = new GoawaySafeSessionManager(await goawayAfterFirstStream());
  const uncaught: unknown[] = [];
  let crashed!: () => void;
  const crash = new Promise<void>((resolve) => (crashed = resolve));
  const onUncaught = (err: unknown) => {
    uncaught.push(err);
    crashed();
  };
  process.on("uncaughtException", onUncaught);
  try {
    const first = await manager.request("POST", "/a", {}, {});
    const old = first.session!;
    const oldClosed = new Promise((resolve) => old.once("close", resolve));
    // The manager destroys the idle connection on its GOAWAY; the request made at that
    // moment finds it destroyed and connects again, letting go of the old session.
    const afterGoaway = new Promise<http2.ClientHttp2Stream>((resolve, reject) =>
      old.once("goaway", () => manager.request("POST", "/b", {}, {}).then(resolve, reject)),
    );
    expect(await statusOf(first)).toBe(200);
    const second = await afterGoaway;
    expect(second.session).not.toBe(old);
    expect(await statusOf(second)).toBe(200);
    // The late error is raised as the old session closes (unhandled, it never closes).
    await Promise.race([oldClosed, crash]);
    await new Promise((resolve) => setImmediate(resolve));
    expect(uncaught.map(String)).toEqual([]);
  } finally {
    process.off("uncaughtException", onUncaught);
    manager.abort();
  }
});
