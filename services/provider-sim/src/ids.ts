import { randomUUID } from "node:crypto";

/**
 * A random UUID as one flat string. randomUUID() builds its text of about twenty
 * concatenated pieces, which V8 keeps as a tree of ~500 bytes until something flattens
 * it; the recorder keeps up to SIM_MAX_RECORDED deliveries with one or two ids each (a
 * 50,000-notification run held ~30 MB of such trees). The copy is ~60 bytes.
 */
export function uuid(): string {
  return Buffer.from(randomUUID(), "latin1").toString("latin1");
}
