import { describe, expect, it, vi } from "vitest";
import type { IdentityClient } from "../backends.js";
import { OAuthServer, type OAuthServerOptions } from "./oauth-server.js";
import type { KeySet } from "./signing-keys.js";

// Providers whose construction the test finishes in the order it chooses.
const pending: { version: string; finish: () => void }[] = [];
vi.mock("./provider.js", () => ({
  createProvider: (o: { keys: KeySet }) =>
    new Promise((resolve) => {
      const provider = { version: o.keys.version, on: () => undefined, callback: () => () => undefined };
      pending.push({ version: o.keys.version, finish: () => resolve(provider) });
    }),
}));

const keySet = (version: string): KeySet => ({ version, keys: [] });

describe("OAuthServer key set changes", () => {
  it("keeps the newest key set's provider current when an older build ends after it", async () => {
    let set = keySet("1");
    const oauth = new OAuthServer({
      issuer: "http://127.0.0.1:1",
      identity: {} as IdentityClient,
      keys: { get: async () => set } as unknown as OAuthServerOptions["keys"],
      accessTokenTtlSeconds: 600,
      log: { error: () => undefined } as unknown as OAuthServerOptions["log"],
    });
    const older = oauth.instance();
    await vi.waitFor(() => expect(pending).toHaveLength(1));
    set = keySet("2");
    const newer = oauth.instance();
    await vi.waitFor(() => expect(pending).toHaveLength(2));

    pending[1]!.finish();
    expect((await newer).version).toBe("2");
    pending[0]!.finish();
    expect((await older).version).toBe("1");
    // The older build served its own callers; it did not replace the newer one (which a
    // third build, never finished here, would mean).
    const now = await Promise.race([oauth.instance(), new Promise((r) => setTimeout(() => r("a rebuild"), 1_000))]);
    expect(now).toBe(await newer);
    expect(pending).toHaveLength(2);
  });
});
