/**
 * The layout of the one aes128gcm record (RFC 8188 §2) a Web Push message is sent in: its
 * size and the largest plaintext it holds. Constants only, apart from ece.ts, so the
 * campaign service can check payload sizes without loading the encryption's per-thread
 * state.
 */
export const RECORD_SIZE = 4096;
/** salt (16) ‖ record size (4) ‖ key id length (1) ‖ key id: the sender's P-256 public key (65). */
export const HEADER_LENGTH = 16 + 4 + 1 + 65;
export const TAG_LENGTH = 16;
/** Largest plaintext that fits one 4096-byte record: 4096 − 86 − 16 − 1 (delimiter). */
export const MAX_PLAINTEXT = RECORD_SIZE - HEADER_LENGTH - TAG_LENGTH - 1;
