/** A push request the simulator refuses: the HTTP status and the `reason` in the JSON body. */
export interface Refusal {
  status: number;
  reason: string;
}

export type Checked<T> = { ok: true; value: T } | { ok: false; refusal: Refusal };

export const ok = <T>(value: T): Checked<T> => ({ ok: true, value });
export const refuse = (status: number, reason: string): { ok: false; refusal: Refusal } => ({
  ok: false,
  refusal: { status, reason },
});
