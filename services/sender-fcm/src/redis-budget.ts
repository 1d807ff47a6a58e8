import { createHash } from "node:crypto";
import type { Redis } from "ioredis";
import type { BudgetStore, Reservation } from "./rate-ceiling.js";

/**
 * Reserves up to ARGV[1] sends of the current window (limit ARGV[2], length ARGV[3] ms).
 * The window comes from Redis's clock, so replicas with skewed clocks still agree on it;
 * the window's counter key derives from KEYS[1], whose {hash tag} keeps both in one
 * cluster slot. Counters expire one window after their window ended.
 */
const SCRIPT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local window_ms = tonumber(ARGV[3])
local window = math.floor(now / window_ms)
local key = KEYS[1] .. ':' .. window
local used = tonumber(redis.call('GET', key) or '0')
local grant = math.min(tonumber(ARGV[1]), tonumber(ARGV[2]) - used)
if grant > 0 then
  redis.call('INCRBY', key, grant)
  redis.call('PEXPIRE', key, window_ms * 2)
else
  grant = 0
end
return {grant, (window + 1) * window_ms - now}
`;
const SCRIPT_SHA = createHash("sha1").update(SCRIPT).digest("hex");

/** The key holding an app's counters: `<prefix>fcm:rate:{<app>}:<window number>`. */
export const budgetKey = (prefix: string, appId: string): string => `${prefix}fcm:rate:{${appId}}`;

export class RedisBudgetStore implements BudgetStore {
  constructor(
    private readonly redis: Redis,
    private readonly keyPrefix: string,
  ) {}

  async reserve(appId: string, want: number, limit: number, windowMs: number): Promise<Reservation> {
    const key = budgetKey(this.keyPrefix, appId);
    const [granted, windowEndsInMs] = await this.run(key, want, limit, windowMs);
    return { granted, windowEndsInMs };
  }

  /** EVALSHA, falling back to EVAL (which caches the script again) after a restart or failover. */
  private async run(key: string, ...args: number[]): Promise<[number, number]> {
    try {
      return (await this.redis.evalsha(SCRIPT_SHA, 1, key, ...args)) as [number, number];
    } catch (err) {
      if (!/NOSCRIPT/.test((err as Error).message)) throw err;
      return (await this.redis.eval(SCRIPT, 1, key, ...args)) as [number, number];
    }
  }
}
