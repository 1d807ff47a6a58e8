// RFC 8291 message encryption with the aes128gcm content coding (RFC 8188), in one
// record. Every call uses a fresh ephemeral P-256 key pair and a fresh salt, so no two
// messages share a content-encryption key.
import { createCipheriv, createSecretKey, hash, randomFillSync } from "node:crypto";
import { HEADER_LENGTH, MAX_PLAINTEXT, RECORD_SIZE, TAG_LENGTH } from "./ece-record.js";
import { loadKeyAgreement } from "./key-agreement.js";

export class PayloadTooLargeError extends Error {
  constructor(readonly size: number) {
    super(`web push payload of ${size} bytes exceeds ${MAX_PLAINTEXT} bytes`);
    this.name = "PayloadTooLargeError";
  }
}

/** The subscription's p256dh is not a point of P-256: no message can ever be encrypted to it. */
export class InvalidSubscriberKeyError extends Error {
  constructor() {
    super("the subscription's p256dh key is not a P-256 public key");
    this.name = "InvalidSubscriberKeyError";
  }
}

export interface Subscriber {
  /** The subscription's p256dh: uncompressed P-256 point (65 bytes). */
  publicKey: Buffer;
  /** The subscription's 16-byte auth secret. */
  authSecret: Buffer;
}

const KEY_INFO_PREFIX = Buffer.from("WebPush: info\0", "latin1");
const CEK_INFO = Buffer.from("Content-Encoding: aes128gcm\0", "latin1");
const NONCE_INFO = Buffer.from("Content-Encoding: nonce\0", "latin1");
/** HKDF-Expand's counter octet for the first (here the only) block of output. */
const FIRST_BLOCK = Buffer.of(1);
const SHA256_BLOCK = 64;

/** This thread's key agreement: the native addon when it is built (key-agreement.ts). */
export const keyAgreement = loadKeyAgreement();
const { agree } = keyAgreement;

const SENDER_PUBLIC_AT = 21;
const POINT_LENGTH = 65;
/** This thread's shared secret, overwritten by every message (encrypt is synchronous). */
const SHARED_SECRET = Buffer.alloc(32);

/**
 * Encrypts one message (sync: the key pair and the key agreement cost 58–62 µs of CPU
 * with the native addon on the latest benchmark machine, 129–130 µs with node:crypto;
 * the sender runs this in worker threads, see encryptor.ts).
 */
export function encrypt(plaintext: Buffer, to: Subscriber): Buffer {
  if (plaintext.length > MAX_PLAINTEXT) throw new PayloadTooLargeError(plaintext.length);
  const recordLength = plaintext.length + 1 + TAG_LENGTH;
  // The whole body in one buffer: from Node's shared pool below 4 KB, filled in place;
  // the key agreement writes our public key straight into its header.
  const body = Buffer.allocUnsafe(HEADER_LENGTH + recordLength);
  const senderPublic = body.subarray(SENDER_PUBLIC_AT, SENDER_PUBLIC_AT + POINT_LENGTH);
  if (!agree(to.publicKey, senderPublic, SHARED_SECRET)) throw new InvalidSubscriberKeyError();
  const salt = body.subarray(0, 16);
  takeSalt(salt);
  body.writeUInt32BE(RECORD_SIZE, 16);
  body.writeUInt8(POINT_LENGTH, 20);

  // RFC 8291 §3.4 and RFC 8188 §2.2: HKDF (RFC 5869) with SHA-256, every output at most
  // one 32-byte block, so each is Extract = HMAC(salt, ikm) then Expand = HMAC(prk, info ‖ 0x01).
  const ikm = hmacSha256(
    hmacSha256(to.authSecret, SHARED_SECRET),
    KEY_INFO_PREFIX,
    to.publicKey,
    senderPublic,
    FIRST_BLOCK,
  );
  const prk = hmacSha256(salt, ikm);
  const cek = hmacSha256(prk, CEK_INFO, FIRST_BLOCK).subarray(0, 16);
  const nonce = hmacSha256(prk, NONCE_INFO, FIRST_BLOCK).subarray(0, 12);

  // The key goes in as a KeyObject: given a Buffer, Node 24's createCipheriv first asks
  // whether it is a KeyObject, then a CryptoKey, each by catching a thrown TypeError with
  // its stack trace; that took ~13 of the cipher's ~16 µs (8 % of an encryption thread's
  // time in the senders bench). createSecretKey takes the Buffer without asking.
  const cipher = createCipheriv("aes-128-gcm", createSecretKey(cek), nonce);
  // The record: the plaintext, then 0x02 for the last (and only) record, no further padding.
  const record = body.subarray(HEADER_LENGTH, HEADER_LENGTH + plaintext.length + 1);
  plaintext.copy(record);
  record[plaintext.length] = 2;
  cipher.update(record).copy(record);
  cipher.final();
  cipher.getAuthTag().copy(body, HEADER_LENGTH + plaintext.length + 1);
  return body;
}

/**
 * Salts are cut from a block of random bytes, refilled when used up, as Node's own
 * randomUUID does: one call into OpenSSL's generator per 256 messages instead of one per
 * message (each call cost 4 µs alone, and showed as 6 % of an encryption thread's
 * profile with two threads drawing at once). Every salt is used once.
 */
const SALT_BLOCK = Buffer.alloc(16 * 256);
let saltAt = SALT_BLOCK.length;

function takeSalt(into: Buffer): void {
  if (saltAt === SALT_BLOCK.length) {
    randomFillSync(SALT_BLOCK);
    saltAt = 0;
  }
  saltAt += SALT_BLOCK.copy(into, 0, saltAt, saltAt + 16);
}

/** Scratch for hmacSha256's two hash inputs: this thread's, reused by every call (calls are synchronous). */
const INNER = Buffer.alloc(SHA256_BLOCK + 256);
const OUTER = Buffer.alloc(SHA256_BLOCK + 32);

/**
 * HMAC-SHA-256 (RFC 2104) of the concatenated `data`, from two one-shot hashes. Written
 * here because Node's own are slow for many tiny inputs: createHmac builds a stream
 * object and hkdfSync a KeyObject per call; measured on the benchmark machine, the three
 * hkdfSync calls of a message took ~75 µs, these five HMACs ~30 µs (the test checks them
 * against createHmac). The padded blocks are built in reused scratch buffers, so a call
 * allocates only the two digests. Keys here are 16 or 32 bytes: longer than a block is
 * refused, not hashed.
 */
export function hmacSha256(key: Buffer, ...data: Buffer[]): Buffer {
  if (key.length > SHA256_BLOCK) throw new RangeError("hmacSha256: keys longer than 64 bytes are not supported");
  let length = 0;
  for (const d of data) length += d.length;
  const inner = SHA256_BLOCK + length <= INNER.length ? INNER : Buffer.allocUnsafe(SHA256_BLOCK + length);
  padKey(inner, key, 0x36);
  let at = SHA256_BLOCK;
  for (const d of data) at += d.copy(inner, at);
  padKey(OUTER, key, 0x5c);
  hash("sha256", inner.subarray(0, at), "buffer").copy(OUTER, SHA256_BLOCK);
  return hash("sha256", OUTER, "buffer");
}

/** The first block of `into`: the key, zero-padded to 64 bytes, each byte XORed with `pad`. */
function padKey(into: Buffer, key: Buffer, pad: number): void {
  into.fill(0, key.copy(into), SHA256_BLOCK);
  for (let i = 0; i < SHA256_BLOCK; i++) into[i]! ^= pad;
}
