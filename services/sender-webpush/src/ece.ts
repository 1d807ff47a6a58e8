import { createCipheriv, createECDH, createSecretKey, hash, randomBytes } from "node:crypto";

/**
 * RFC 8291 message encryption with the aes128gcm content coding (RFC 8188), in one
 * record. Every call uses a fresh ephemeral P-256 key pair and a fresh salt, so no two
 * messages share a content-encryption key.
 */
export const RECORD_SIZE = 4096;
const HEADER_LENGTH = 16 + 4 + 1 + 65;
const TAG_LENGTH = 16;
/** Largest plaintext that fits one 4096-byte record: 4096 − 86 − 16 − 1 (delimiter). */
export const MAX_PLAINTEXT = RECORD_SIZE - HEADER_LENGTH - TAG_LENGTH - 1;

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

/**
 * Encrypts one message (sync: a fresh P-256 key pair and the key agreement cost some
 * 150 µs of CPU; the sender runs this in worker threads, see encryptor.ts).
 */
export function encrypt(plaintext: Buffer, to: Subscriber): Buffer {
  if (plaintext.length > MAX_PLAINTEXT) throw new PayloadTooLargeError(plaintext.length);
  const ecdh = createECDH("prime256v1");
  const senderPublic = ecdh.generateKeys();
  let sharedSecret: Buffer;
  try {
    sharedSecret = ecdh.computeSecret(to.publicKey);
  } catch {
    throw new InvalidSubscriberKeyError();
  }
  const salt = randomBytes(16);

  // RFC 8291 §3.4 and RFC 8188 §2.2: HKDF (RFC 5869) with SHA-256, every output at most
  // one 32-byte block, so each is Extract = HMAC(salt, ikm) then Expand = HMAC(prk, info ‖ 0x01).
  const keyInfo = Buffer.concat([KEY_INFO_PREFIX, to.publicKey, senderPublic]);
  const ikm = hmacSha256(hmacSha256(to.authSecret, sharedSecret), keyInfo, FIRST_BLOCK);
  const prk = hmacSha256(salt, ikm);
  const cek = hmacSha256(prk, CEK_INFO, FIRST_BLOCK).subarray(0, 16);
  const nonce = hmacSha256(prk, NONCE_INFO, FIRST_BLOCK).subarray(0, 12);

  // The key goes in as a KeyObject: given a Buffer, Node 24's createCipheriv first asks
  // whether it is a KeyObject, then a CryptoKey, each by catching a thrown TypeError with
  // its stack trace; that took ~13 of the cipher's ~16 µs (8 % of an encryption thread's
  // time in the senders bench). createSecretKey takes the Buffer without asking.
  const cipher = createCipheriv("aes-128-gcm", createSecretKey(cek), nonce);
  // 0x02 marks the last (and only) record; no further padding.
  const ciphertext = Buffer.concat([
    cipher.update(plaintext),
    cipher.update(Buffer.of(2)),
    cipher.final(),
    cipher.getAuthTag(),
  ]);

  const header = Buffer.alloc(HEADER_LENGTH);
  salt.copy(header, 0);
  header.writeUInt32BE(RECORD_SIZE, 16);
  header.writeUInt8(senderPublic.length, 20);
  senderPublic.copy(header, 21);
  return Buffer.concat([header, ciphertext]);
}

/**
 * HMAC-SHA-256 (RFC 2104) of the concatenated `data`, from two one-shot hashes. Written
 * here because Node's own are slow for many tiny inputs: createHmac builds a stream
 * object and hkdfSync a KeyObject per call; measured on the benchmark machine, the three
 * hkdfSync calls of a message took ~75 µs, these five HMACs ~30 µs (the test checks them
 * against createHmac). Keys here are 16 or 32 bytes: longer than a block is refused, not hashed.
 */
export function hmacSha256(key: Buffer, ...data: Buffer[]): Buffer {
  if (key.length > SHA256_BLOCK) throw new RangeError("hmacSha256: keys longer than 64 bytes are not supported");
  const length = data.reduce((n, d) => n + d.length, 0);
  const inner = Buffer.alloc(SHA256_BLOCK + length);
  key.copy(inner);
  for (let i = 0; i < SHA256_BLOCK; i++) inner[i]! ^= 0x36;
  let at = SHA256_BLOCK;
  for (const d of data) at += d.copy(inner, at);
  const outer = Buffer.alloc(SHA256_BLOCK + 32);
  key.copy(outer);
  for (let i = 0; i < SHA256_BLOCK; i++) outer[i]! ^= 0x5c;
  hash("sha256", inner, "buffer").copy(outer, SHA256_BLOCK);
  return hash("sha256", outer, "buffer");
}
