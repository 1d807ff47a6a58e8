import https from "node:https";
import type { TokenEndpoint } from "./oauth-token.js";

const MAX_BODY_BYTES = 64 * 1024;

/**
 * The production TokenEndpoint: HTTPS POST over keep-alive HTTP/1.1 (a token is fetched
 * about once an hour per account, so a pooled HTTP/2 session would buy nothing). TLS is
 * verified against the system store plus NODE_EXTRA_CA_CERTS; plain http is refused.
 */
export function httpsTokenEndpoint(agent: https.Agent, timeoutMs = 10_000): TokenEndpoint {
  return (tokenUri, form) =>
    new Promise((resolve, reject) => {
      const url = new URL(tokenUri);
      if (url.protocol !== "https:")
        return reject(Object.assign(new Error("token_uri must be https"), { code: "ERR_NOT_HTTPS" }));
      const req = https.request(url, {
        method: "POST",
        agent,
        timeout: timeoutMs,
        headers: {
          "content-type": "application/x-www-form-urlencoded",
          "content-length": String(Buffer.byteLength(form)),
          accept: "application/json",
        },
      });
      req.on("timeout", () => req.destroy(Object.assign(new Error("token endpoint timed out"), { code: "ETIMEDOUT" })));
      req.on("error", reject);
      req.on("response", (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on("data", (c: Buffer) => {
          size += c.length;
          if (size <= MAX_BODY_BYTES) chunks.push(c);
        });
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString("utf8") }));
        res.on("error", reject);
      });
      req.end(form);
    });
}
