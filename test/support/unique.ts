import { randomBytes } from "node:crypto";

/** A name no other test uses: for schemas, streams, Redis key prefixes. */
export function uniqueName(prefix: string): string {
  return `${prefix}_${randomBytes(5).toString("hex")}`;
}
