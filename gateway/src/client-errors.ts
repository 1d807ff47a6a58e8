import { STATUS_CODES } from "node:http";
import type { Socket } from "node:net";
import { errorReply } from "./http-errors.js";

/**
 * Requests Node's HTTP parser refuses before fastify sees them (no route, no hook runs):
 * headers over the server's limit (16 KiB, Node's default, also bounding the request
 * line), a request line or framing it cannot parse, a request too slow to arrive. They
 * get the API's error body like every other answer, then the connection is closed: after
 * a parse error the rest of the stream cannot be trusted.
 */
export function clientErrorReply(err: NodeJS.ErrnoException, socket: Socket): void {
  if (err.code === "ECONNRESET" || socket.destroyed) return;
  const { status, body } =
    err.code === "HPE_HEADER_OVERFLOW"
      ? errorReply("RequestHeaderFieldsTooLarge", "the request line and headers exceed 16 KiB")
      : err.code === "ERR_HTTP_REQUEST_TIMEOUT"
        ? errorReply("RequestTimeout", "the request did not arrive in time")
        : errorReply("ValidationError", "the request is not well-formed HTTP/1.1");
  const text = JSON.stringify(body);
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json\r\n` +
        `Content-Length: ${Buffer.byteLength(text)}\r\nConnection: close\r\n\r\n${text}`,
    );
  }
  socket.destroy();
}
