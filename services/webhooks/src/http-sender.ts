import http from "node:http";
import https from "node:https";
import type { LookupFunction } from "node:net";
import { isIP } from "node:net";
import { classifyAddress, type Resolver } from "@herald/runtime";
import { lookup as dnsLookup } from "node:dns/promises";

/** What a POST came to; the body is cut at RESPONSE_LIMIT bytes. */
export type PostResult = { ok: true; status: number; body: string } | { ok: false; error: string };

export const RESPONSE_LIMIT = 1024;

const systemResolver: Resolver = async (host) =>
  (await dnsLookup(host, { all: true, verbatim: true })).map((a) => a.address);

/**
 * A `lookup` for the socket: resolves with `resolve` and refuses a host that resolves to a
 * loopback, private, link-local (any non-public) address unless allowPrivate, at connect
 * time, so a name that passed the check at create cannot be rebound to an internal address.
 */
export function guardedLookup(resolve: Resolver, allowPrivate: boolean): LookupFunction {
  return (hostname, options, callback) => {
    resolve(hostname).then(
      (addresses) => {
        const usable = allowPrivate ? addresses : addresses.filter((a) => classifyAddress(a) === "public");
        if (usable.length === 0) {
          const err = Object.assign(
            new Error(addresses.length === 0 ? "host does not resolve" : "host resolves to a non-public address"),
            { code: "EREFUSED" },
          );
          return callback(err, "", 0);
        }
        const all = usable.map((address) => ({ address, family: isIP(address) }));
        if ((options as { all?: boolean }).all) return (callback as (e: null, a: typeof all) => void)(null, all);
        callback(null, all[0]!.address, all[0]!.family);
      },
      (err: Error) =>
        callback(Object.assign(new Error("host does not resolve"), { code: "ENOTFOUND", cause: err }), "", 0),
    );
  };
}

export interface SenderOptions {
  allowPrivate: boolean;
  timeoutMs: number;
  resolve?: Resolver;
}

/** POSTs webhook bodies through the address guard; never follows redirects. */
export class HttpSender {
  private readonly lookup: LookupFunction;
  private readonly httpAgent: http.Agent;
  private readonly httpsAgent: https.Agent;

  constructor(private readonly opts: SenderOptions) {
    this.lookup = guardedLookup(opts.resolve ?? systemResolver, opts.allowPrivate);
    this.httpAgent = new http.Agent({ keepAlive: true, lookup: this.lookup } as http.AgentOptions);
    this.httpsAgent = new https.Agent({ keepAlive: true, lookup: this.lookup } as https.AgentOptions);
  }

  post(rawUrl: string, headers: Record<string, string>, body: string): Promise<PostResult> {
    let url: URL;
    try {
      url = new URL(rawUrl);
    } catch {
      return Promise.resolve({ ok: false, error: "not a valid URL" });
    }
    const secure = url.protocol === "https:";
    if (!secure && !(url.protocol === "http:" && this.opts.allowPrivate)) {
      return Promise.resolve({ ok: false, error: "must be an https URL" });
    }
    // An address literal is never looked up: check it here.
    const host = url.hostname.replace(/^\[(.*)\]$/, "$1");
    if (isIP(host) && !this.opts.allowPrivate && classifyAddress(host) !== "public") {
      return Promise.resolve({ ok: false, error: "host is a non-public address" });
    }
    return new Promise((resolve) => {
      const req = (secure ? https : http).request(
        url,
        {
          method: "POST",
          agent: secure ? this.httpsAgent : this.httpAgent,
          lookup: this.lookup,
          headers: {
            ...headers,
            "content-type": "application/json",
            "content-length": Buffer.byteLength(body),
            "user-agent": "Herald-Webhooks/1",
          },
          signal: AbortSignal.timeout(this.opts.timeoutMs),
        },
        (res) => {
          const chunks: Buffer[] = [];
          let size = 0;
          res.on("data", (chunk: Buffer) => {
            if (size < RESPONSE_LIMIT) chunks.push(chunk);
            size += chunk.length;
            if (size >= RESPONSE_LIMIT) res.destroy();
          });
          const done = () =>
            resolve({
              ok: true,
              status: res.statusCode ?? 0,
              body: Buffer.concat(chunks).subarray(0, RESPONSE_LIMIT).toString("utf8"),
            });
          res.on("end", done);
          res.on("close", done);
          res.on("error", done);
        },
      );
      req.on("error", (err: Error & { code?: string }) => {
        const timedOut = err.name === "AbortError" || err.name === "TimeoutError";
        resolve({ ok: false, error: timedOut ? `timed out after ${this.opts.timeoutMs} ms` : describe(err) });
      });
      req.end(body);
    });
  }

  close(): void {
    this.httpAgent.destroy();
    this.httpsAgent.destroy();
  }
}

/** A connection error without anything of the request (no URL, no header). */
function describe(err: Error & { code?: string }): string {
  if (err.code === "EREFUSED" || err.code === "ENOTFOUND") return err.message;
  return err.code ? `connection failed (${err.code})` : "connection failed";
}
