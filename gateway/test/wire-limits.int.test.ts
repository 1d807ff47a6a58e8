import net from "node:net";
import { beforeAll, describe, expect, it } from "vitest";
import { useGatewayStack } from "./harness.js";

/**
 * What the HTTP parser refuses before any route runs, over a real socket (inject()
 * bypasses the parser): each answer is the API's error body, with the right status.
 */
const gw = useGatewayStack();
let port: number;

beforeAll(async () => {
  await gw.app.listen({ port: 0, host: "127.0.0.1" });
  port = (gw.app.server.address() as net.AddressInfo).port;
});

/** Sends raw bytes; answers the status and JSON body of the first response. */
function raw(request: string): Promise<{ status: number; body: unknown }> {
  return new Promise((resolve, reject) => {
    let out = "";
    const socket = net.connect(port, "127.0.0.1", () => socket.write(request));
    socket.on("data", (d) => (out += d));
    // The server closes at once after such an answer: a client still writing may see a
    // reset after the answer arrived.
    socket.on("error", (err) => (out ? undefined : reject(err)));
    socket.on("close", () => {
      const [head = "", body = ""] = out.split("\r\n\r\n");
      resolve({ status: Number(head.split(" ")[1]), body: body ? JSON.parse(body) : undefined });
    });
    setTimeout(() => socket.destroy(), 5_000);
  });
}

const ERROR_BODY = { error: expect.any(String), message: expect.any(String) };

describe("requests the HTTP parser refuses", () => {
  it("answers headers over 16 KiB with 431 and the API's error body", async () => {
    const res = await raw(`GET /v1/apps HTTP/1.1\r\nHost: x\r\nX-Big: ${"a".repeat(20_000)}\r\n\r\n`);
    expect(res).toEqual({ status: 431, body: { error: "RequestHeaderFieldsTooLarge", message: expect.any(String) } });
  });

  it("answers a request line over the limit (a 17,000-character path) with 431", async () => {
    const res = await raw(`GET /v1/apps/${"a".repeat(17_000)} HTTP/1.1\r\nHost: x\r\n\r\n`);
    expect(res.status).toBe(431);
    expect(res.body).toEqual(ERROR_BODY);
  });

  it("answers malformed HTTP with 400 ValidationError", async () => {
    for (const request of [
      "GARBAGE\r\n\r\n",
      "GET /v1/apps HTTP/9.9\r\nHost: x\r\n\r\n",
      "POST /v1/apps HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\nhello",
      "GET /v1/apps HTTP/1.1\r\nHo st: x\r\n\r\n",
    ]) {
      const res = await raw(request);
      expect(res, JSON.stringify(request.slice(0, 40))).toEqual({
        status: 400,
        body: { error: "ValidationError", message: expect.any(String) },
      });
    }
  });

  it("still serves the next connection normally", async () => {
    const res = await raw("GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    expect(res.status).toBe(200);
  });
});
