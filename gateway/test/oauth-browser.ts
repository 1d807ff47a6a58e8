import type { FastifyInstance } from "fastify";
import * as oauth from "oauth4webapi";

/**
 * Test support for the OAuth server: a fetch that goes through app.inject (so
 * oauth4webapi talks to the gateway without a socket) and a minimal browser (a cookie
 * jar, redirects followed by hand, forms posted as a browser would).
 */

export function injectFetch(app: FastifyInstance): typeof fetch {
  return (async (input: string | URL | Request, init: RequestInit = {}) => {
    const url = new URL(input instanceof Request ? input.url : input.toString());
    const headers: Record<string, string> = {};
    new Headers(init.headers).forEach((value, key) => {
      headers[key] = value;
    });
    const res = await app.inject({
      method: (init.method ?? "GET") as "GET",
      url: url.pathname + url.search,
      headers,
      ...(init.body !== undefined && init.body !== null ? { payload: init.body.toString() } : {}),
    });
    const out = new Headers();
    for (const [key, value] of Object.entries(res.headers)) {
      if (value === undefined) continue;
      for (const v of Array.isArray(value) ? value : [String(value)]) out.append(key, v);
    }
    const body = res.statusCode === 204 || res.statusCode === 304 ? null : res.rawPayload;
    return new Response(body, { status: res.statusCode, headers: out });
  }) as typeof fetch;
}

export interface Page {
  status: number;
  headers: Record<string, string | string[] | number | undefined>;
  body: string;
  location?: string;
}

export class Browser {
  readonly cookies = new Map<string, string>();

  constructor(private readonly app: FastifyInstance) {}

  async request(method: "GET" | "POST", path: string, form?: Record<string, string>): Promise<Page> {
    const cookie = [...this.cookies].map(([k, v]) => `${k}=${v}`).join("; ");
    const res = await this.app.inject({
      method,
      url: path,
      headers: {
        ...(cookie ? { cookie } : {}),
        ...(form ? { "content-type": "application/x-www-form-urlencoded" } : {}),
      },
      ...(form ? { payload: new URLSearchParams(form).toString() } : {}),
    });
    const setCookie = res.headers["set-cookie"];
    for (const line of Array.isArray(setCookie) ? setCookie : setCookie ? [setCookie] : []) {
      const [pair, ...attrs] = line.split(";");
      const eq = pair!.indexOf("=");
      const name = pair!.slice(0, eq).trim();
      const value = pair!.slice(eq + 1).trim();
      const expired = attrs.some((a) => /^\s*expires=/i.test(a) && new Date(a.split("=")[1]!).getTime() < Date.now());
      if (!value || expired) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
    const location = res.headers.location as string | undefined;
    return { status: res.statusCode, headers: res.headers, body: res.body, ...(location ? { location } : {}) };
  }

  /** Follows redirects on this origin; stops at the first page or at a redirect elsewhere. */
  async follow(start: Page, origin: string): Promise<Page> {
    let page = start;
    for (let hops = 0; page.location && hops < 10; hops++) {
      const next = new URL(page.location, origin);
      if (next.origin !== origin || next.pathname.startsWith("/console/")) return page;
      page = await this.request("GET", next.pathname + next.search);
    }
    return page;
  }
}

/** The hidden CSRF field and the action of the first form of a page. */
export function formOf(html: string): { action: string; csrf: string } {
  const action = /<form[^>]*action="([^"]+)"/.exec(html)?.[1];
  const csrf = /name="csrf" value="([^"]+)"/.exec(html)?.[1];
  if (!action || !csrf) throw new Error(`no form in page: ${html.slice(0, 300)}`);
  return { action: action.replace(/&amp;/g, "&"), csrf };
}

export interface Pkce {
  verifier: string;
  challenge: string;
  state: string;
}

export async function pkce(): Promise<Pkce> {
  const verifier = oauth.generateRandomCodeVerifier();
  return { verifier, challenge: await oauth.calculatePKCECodeChallenge(verifier), state: oauth.generateRandomState() };
}
