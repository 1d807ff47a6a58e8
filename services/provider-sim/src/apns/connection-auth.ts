import type { ConnectionAnnotation } from "../connections.js";
import { ok, refuse, type Checked } from "../refusal.js";
import type { VerifiedToken } from "./provider-token.js";

/**
 * The provider-token rules APNs applies per connection, on top of each token being
 * valid: one team per connection (a valid token of another team is refused
 * InvalidProviderToken, as pushy's mock does; Apple names no separate reason), and a
 * token may change at most once per `minIntervalMs` (Apple: "no more than once every 20
 * minutes"), else 429 TooManyProviderTokenUpdates. A refused update leaves the
 * connection's current token in force, so a sender that keeps its token keeps working.
 */
export class ConnectionAuth implements ConnectionAnnotation {
  private teamId: string | null = null;
  private token: string | null = null;
  private tokenSetAt = 0;
  private updates = 0;
  private refusedUpdates = 0;

  constructor(private readonly minIntervalMs: number) {}

  accept(verified: VerifiedToken, nowMs: number): Checked<null> {
    if (this.teamId !== null && verified.teamId !== this.teamId) return refuse(403, "InvalidProviderToken");
    if (verified.token === this.token) return ok(null);
    if (this.token !== null) {
      if (nowMs - this.tokenSetAt < this.minIntervalMs) {
        this.refusedUpdates += 1;
        return refuse(429, "TooManyProviderTokenUpdates");
      }
      this.updates += 1;
    }
    this.teamId = verified.teamId;
    this.token = verified.token;
    this.tokenSetAt = nowMs;
    return ok(null);
  }

  view(): Record<string, unknown> {
    return {
      team_id: this.teamId,
      token_updates: this.updates,
      refused_token_updates: this.refusedUpdates,
      token_set_at: this.token === null ? null : new Date(this.tokenSetAt).toISOString(),
    };
  }
}
