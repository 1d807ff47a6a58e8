import { createRequire } from "node:module";
import type { ECDH } from "node:crypto";
import { ok, refuse, type Checked } from "../refusal.js";

/** The part of http_ece (CommonJS, untyped) the simulator uses. */
interface HttpEce {
  decrypt(buffer: Buffer, params: { version: "aes128gcm"; privateKey: ECDH; authSecret: Buffer }): Buffer;
}
const ece = createRequire(import.meta.url)("http_ece") as HttpEce;

/** RFC 8188 header: salt(16) ‖ rs(4) ‖ idlen(1) ‖ keyid(idlen). */
const HEADER_FIXED = 21;
/** RFC 8291 §4: the keyid is the application server's ephemeral public key. */
const KEYID_LENGTH = 65;
/** One record needs at least the padding delimiter and the 16-byte tag. */
const MIN_RECORD = 17;

/**
 * Decrypts an RFC 8291 message the way a user agent does. Beyond what http_ece checks,
 * the RFC's framing is enforced: a 65-byte uncompressed P-256 keyid, and exactly one
 * record (RFC 8291 §4: "an application server MUST encrypt a push message with a single
 * record"), so a sender that splits records is caught here rather than by a browser.
 */
export function decryptPushMessage(body: Buffer, privateKey: ECDH, authSecret: Buffer): Checked<Buffer> {
  if (body.length < HEADER_FIXED + KEYID_LENGTH + MIN_RECORD) return refuse(400, "TruncatedContent");
  const rs = body.readUInt32BE(16);
  const idlen = body[20];
  if (idlen !== KEYID_LENGTH || body[HEADER_FIXED] !== 0x04) return refuse(400, "InvalidKeyId");
  if (rs < MIN_RECORD + 1) return refuse(400, "InvalidRecordSize");
  if (body.length - HEADER_FIXED - KEYID_LENGTH > rs) return refuse(400, "MultipleRecords");
  try {
    return ok(ece.decrypt(body, { version: "aes128gcm", privateKey, authSecret }));
  } catch {
    return refuse(400, "DecryptionFailed");
  }
}
