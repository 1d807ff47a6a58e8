import type { Platform } from "./platform.js";

export interface RequestStats {
  requests: number;
  accepted: number;
  /** Connections or streams cut by an injected drop: no status was ever sent. */
  dropped: number;
  /** Refusals by HTTP status, injected faults included. */
  refused: Record<string, number>;
}

/** Request counters for the TLS port, in total and per platform. */
export class Stats {
  private total = emptyStats();
  private readonly byPlatform = new Map<Platform, RequestStats>();

  /** `status` undefined means the request was dropped. */
  count(platform: Platform | undefined, status: number | undefined): void {
    const targets = [this.total];
    if (platform) {
      let s = this.byPlatform.get(platform);
      if (!s) this.byPlatform.set(platform, (s = emptyStats()));
      targets.push(s);
    }
    for (const s of targets) {
      s.requests += 1;
      if (status === undefined) s.dropped += 1;
      else if (status < 300) s.accepted += 1;
      else s.refused[status] = (s.refused[status] ?? 0) + 1;
    }
  }

  snapshot(): RequestStats & { platforms: Record<string, RequestStats> } {
    return { ...structuredClone(this.total), platforms: Object.fromEntries(structuredClone([...this.byPlatform])) };
  }

  reset(): void {
    this.total = emptyStats();
    this.byPlatform.clear();
  }
}

function emptyStats(): RequestStats {
  return { requests: 0, accepted: 0, dropped: 0, refused: {} };
}
