import { describe, expect, it } from "vitest";
import { createHeraldClient } from "./client.js";
import { HeraldError } from "./errors.js";
import { pages, paginate } from "./paginate.js";

/** A client whose fetch answers from `answer` and records each request. */
function fakeClient(answer: (url: URL) => Response) {
  const requests: Request[] = [];
  const client = createHeraldClient({
    baseUrl: "https://herald.example.com/",
    apiKey: "hk_live_test",
    fetch: async (request) => {
      requests.push(request);
      return answer(new URL(request.url));
    },
  });
  return { client, requests };
}

const json = (body: unknown, status = 200, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json", ...headers } });

/** A list of `total` numbered items served `per_page` at a time. */
const list = (total: number) => (url: URL) => {
  const page = Number(url.searchParams.get("page"));
  const perPage = Number(url.searchParams.get("per_page") ?? 50);
  const data = Array.from({ length: total }, (_, i) => ({ id: String(i) })).slice((page - 1) * perPage, page * perPage);
  return json({ data, page, per_page: perPage, total });
};

describe("paginate", () => {
  it("walks the pages until total, with the key and JSON headers on every request", async () => {
    const { client, requests } = fakeClient(list(5));
    const ids: string[] = [];
    for await (const d of paginate(client, "/v1/apps", { params: { query: { per_page: 2 } } })) ids.push(d.id);
    expect(ids).toEqual(["0", "1", "2", "3", "4"]);
    expect(requests.map((r) => new URL(r.url).search)).toEqual([
      "?per_page=2&page=1",
      "?per_page=2&page=2",
      "?per_page=2&page=3",
    ]);
    for (const r of requests) {
      expect(new URL(r.url).pathname).toBe("/v1/apps");
      expect(r.headers.get("authorization")).toBe("Bearer hk_live_test");
      expect(r.headers.get("accept")).toBe("application/json");
    }
  });

  it("stops at an empty page even when total promised more", async () => {
    const { client, requests } = fakeClient((url) =>
      json({ data: url.searchParams.get("page") === "1" ? [{ id: "a" }] : [], page: 1, per_page: 1, total: 9 }),
    );
    const got = [];
    for await (const p of pages(client, "/v1/apps", { params: { query: { per_page: 1 } } })) got.push(p.data.length);
    expect(got).toEqual([1, 0]);
    expect(requests).toHaveLength(2);
  });

  it("fills in path parameters and keeps them on every page", async () => {
    const { client, requests } = fakeClient(list(3));
    const app = "7d0c7b0e-3f2a-4c1e-9a41-6b0f5a2d9c11";
    let n = 0;
    for await (const _ of paginate(client, "/v1/apps/{app_id}/api-keys", {
      params: { path: { app_id: app }, query: { per_page: 2 } },
    })) {
      n++;
    }
    expect(n).toBe(3);
    expect(requests.map((r) => new URL(r.url).pathname)).toEqual([
      `/v1/apps/${app}/api-keys`,
      `/v1/apps/${app}/api-keys`,
    ]);
  });

  it("fetches only the pages the loop asks for", async () => {
    const { client, requests } = fakeClient(list(1000));
    for await (const d of paginate(client, "/v1/apps", { params: { query: { per_page: 10 } } })) {
      if (d.id === "12") break;
    }
    expect(requests).toHaveLength(2);
  });
});

describe("HeraldError", () => {
  it("carries the API's error body, the request id and Retry-After", async () => {
    const { client } = fakeClient(() =>
      json({ error: "RateLimited", message: "rate limit exceeded" }, 429, {
        "retry-after": "17",
        "x-request-id": "r1",
      }),
    );
    const err = await pages(client, "/v1/apps")
      .next()
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(HeraldError);
    expect(err).toMatchObject({
      status: 429,
      error: "RateLimited",
      message: "rate limit exceeded",
      requestId: "r1",
      retryAfterSeconds: 17,
    });
  });

  it("names a body that is not the API's error JSON HttpError", async () => {
    const { client } = fakeClient(
      () => new Response("<html>Bad gateway</html>", { status: 502, statusText: "Bad Gateway" }),
    );
    const err = await pages(client, "/v1/apps")
      .next()
      .catch((e: unknown) => e);
    expect(err).toMatchObject({
      status: 502,
      error: "HttpError",
      message: "502 Bad Gateway",
      retryAfterSeconds: undefined,
    });
  });
});

describe("createHeraldClient", () => {
  it("needs a key or a token and an absolute base URL", () => {
    expect(() => createHeraldClient({ baseUrl: "https://h.example.com", apiKey: "" })).toThrow(/apiKey or accessToken/);
    expect(() => createHeraldClient({ baseUrl: "/relative", apiKey: "k" })).toThrow(/absolute URL/);
  });
});
