import { describe, expect, it } from "vitest";
import { ConnectionAuth } from "./connection-auth.js";
import type { VerifiedToken } from "./provider-token.js";

const MIN = 20 * 60_000;
const token = (name: string, teamId = "TEAM123456"): VerifiedToken => ({
  token: name,
  teamId,
  keyId: "KEY1234567",
  iat: 0,
});
const outcome = (r: ReturnType<ConnectionAuth["accept"]>) => (r.ok ? "ok" : `${r.refusal.status} ${r.refusal.reason}`);

describe("ConnectionAuth", () => {
  it("takes the first token, and the same token again at any time", () => {
    const auth = new ConnectionAuth(MIN);
    expect(outcome(auth.accept(token("a"), 0))).toBe("ok");
    expect(outcome(auth.accept(token("a"), 1))).toBe("ok");
    expect(outcome(auth.accept(token("a"), 10 * MIN))).toBe("ok");
    expect(auth.view()).toMatchObject({ team_id: "TEAM123456", token_updates: 0 });
  });

  it("refuses a new token within the interval with 429, keeping the current one in force", () => {
    const auth = new ConnectionAuth(MIN);
    auth.accept(token("a"), 1_000);
    expect(outcome(auth.accept(token("b"), 1_000 + MIN - 1))).toBe("429 TooManyProviderTokenUpdates");
    expect(outcome(auth.accept(token("a"), 1_000 + MIN - 1))).toBe("ok");
    expect(auth.view()).toMatchObject({ token_updates: 0, refused_token_updates: 1 });
  });

  it("accepts a new token once the interval has passed, and counts the interval from that update", () => {
    const auth = new ConnectionAuth(MIN);
    auth.accept(token("a"), 0);
    expect(outcome(auth.accept(token("b"), MIN))).toBe("ok");
    expect(outcome(auth.accept(token("c"), 2 * MIN - 1))).toBe("429 TooManyProviderTokenUpdates");
    expect(outcome(auth.accept(token("c"), 2 * MIN))).toBe("ok");
    expect(auth.view()).toMatchObject({ token_updates: 2, token_set_at: new Date(2 * MIN).toISOString() });
  });

  it("allows one team per connection", () => {
    const auth = new ConnectionAuth(0);
    auth.accept(token("a", "TEAMAAAAAA"), 0);
    expect(outcome(auth.accept(token("b", "TEAMBBBBBB"), 5 * MIN))).toBe("403 InvalidProviderToken");
    expect(outcome(auth.accept(token("c", "TEAMAAAAAA"), 5 * MIN))).toBe("ok");
  });

  it("with a zero interval lets every change through", () => {
    const auth = new ConnectionAuth(0);
    for (const [i, name] of ["a", "b", "c"].entries()) expect(outcome(auth.accept(token(name), i))).toBe("ok");
  });
});
