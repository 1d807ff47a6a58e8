import { createHash } from "node:crypto";
import type { Redis } from "ioredis";

/** Password attempts per account per window; the next one is refused. */
export const ACCOUNT_ATTEMPTS = 10;
/** Failed attempts per client address per window: looser, shared by everyone behind a NAT. */
export const ADDRESS_FAILURES = 100;
export const THROTTLE_WINDOW_MS = 60_000;

/**
 * One attempt, counted atomically on any number of replicas: refused when the address
 * is over its failure limit, else the account's attempt counter goes up (the window opens
 * with the first attempt) and the attempt is refused past the account's limit. Returns
 * {allowed, retry-after ms}.
 */
const ATTEMPT = `
local failures = tonumber(redis.call('GET', KEYS[2]) or '0')
if failures >= tonumber(ARGV[3]) then
  return {0, redis.call('PTTL', KEYS[2])}
end
local attempts = redis.call('INCR', KEYS[1])
if attempts == 1 or redis.call('PTTL', KEYS[1]) < 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
end
if attempts > tonumber(ARGV[2]) then
  return {0, redis.call('PTTL', KEYS[1])}
end
return {1, 0}
`;

const FAILURE = `
local failures = redis.call('INCR', KEYS[1])
if failures == 1 or redis.call('PTTL', KEYS[1]) < 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
end
return failures
`;

export type AttemptDecision = { allowed: true } | { allowed: false; retryAfterSeconds: number };

/**
 * Brute-force limits of password checks (sign-in, and accepting an invitation as an
 * existing user), in Redis so every replica counts together. Per account: every attempt
 * counts and a success resets the count, so the 11th wrong password within a minute is
 * refused. Per address: only failures count, so people signing in successfully from one
 * office never trip it. Accounts are keyed by a hash of the email, never the email itself.
 * When Redis is unreachable the throttle lets attempts through (like the API's rate
 * limit) rather than locking everyone out.
 */
export class LoginThrottle {
  constructor(
    private readonly redis: Redis,
    private readonly keyPrefix: string,
    private readonly onStoreError: (err: Error) => void = () => undefined,
  ) {}

  async attempt(email: string, address: string): Promise<AttemptDecision> {
    try {
      const [allowed, ttlMs] = (await this.redis.eval(
        ATTEMPT,
        2,
        this.accountKey(email),
        this.addressKey(address),
        THROTTLE_WINDOW_MS,
        ACCOUNT_ATTEMPTS,
        ADDRESS_FAILURES,
      )) as [number, number];
      if (allowed === 1) return { allowed: true };
      return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil(Math.max(ttlMs, 0) / 1000)) };
    } catch (err) {
      this.onStoreError(err as Error);
      return { allowed: true };
    }
  }

  async failed(address: string): Promise<void> {
    try {
      await this.redis.eval(FAILURE, 1, this.addressKey(address), THROTTLE_WINDOW_MS);
    } catch (err) {
      this.onStoreError(err as Error);
    }
  }

  async succeeded(email: string): Promise<void> {
    try {
      await this.redis.del(this.accountKey(email));
    } catch (err) {
      this.onStoreError(err as Error);
    }
  }

  private accountKey(email: string): string {
    const hash = createHash("sha256").update(email.trim().toLowerCase()).digest("base64url");
    return `${this.keyPrefix}signin:account:${hash}`;
  }

  private addressKey(address: string): string {
    return `${this.keyPrefix}signin:address:${address}`;
  }
}
