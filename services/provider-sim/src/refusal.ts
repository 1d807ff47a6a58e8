/** A push request the simulator refuses: the HTTP status and the `reason` in the JSON body. */
export interface Refusal {
  status: number;
  reason: string;
  /** APNs 410 only: when the token stopped being valid (ms since the epoch). */
  timestamp?: number;
}

export type Checked<T> = { ok: true; value: T } | { ok: false; refusal: Refusal };

export const ok = <T>(value: T): Checked<T> => ({ ok: true, value });
export const refuse = (status: number, reason: string, timestamp?: number): { ok: false; refusal: Refusal } => ({
  ok: false,
  refusal: timestamp === undefined ? { status, reason } : { status, reason, timestamp },
});
