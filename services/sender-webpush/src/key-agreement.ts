// RFC 8291's per-message key agreement: a fresh P-256 key pair and ECDH with the
// subscription's p256dh key. Done by the native addon (native/p256-agree.c, built by
// scripts/native-build.mjs with `npm run build`, `npm run dev` and `npm test`) when it is
// built, else by node:crypto, whose key agreement costs about twice as much CPU (why: the
// addon's comment; the sender spends ~40 % more per message). The sender logs which one
// runs at start-up and reports it as a metric (webpush-provider.ts).
import { createECDH } from "node:crypto";
import { createRequire } from "node:module";
import path from "node:path";
// Not the runtime's index: every encryption thread loads this module, and from sources or
// tsc's output the index brings PostgreSQL, NATS and Connect along (the worker's module
// took 537 ms and 60 MB under tsx with it, 156 ms and 30 MB without); the production
// bundle tree-shakes them, dev mode does not.
import { packageDir } from "@herald/runtime/package-dir";

/** Where `npm run build` puts the addon, relative to this workspace (scripts/native-build.mjs). */
export const NATIVE_ADDON = "native/build/p256-agree.node";

/** Writes a fresh key pair's public point (65 bytes) and the shared secret (32 bytes); false when the subscriber's key is not a P-256 point. */
export type Agree = (subscriberPublic: Buffer, senderPublicOut: Buffer, secretOut: Buffer) => boolean;

export interface KeyAgreement {
  readonly kind: "native" | "node:crypto";
  /** Why the native addon is not in use (kind node:crypto). */
  readonly fallbackReason?: string;
  readonly agree: Agree;
}

/** The addon's answer per call: AGREED, INVALID_PEER (not a P-256 point), or 2: OpenSSL failed otherwise. */
const AGREED = 0;
const INVALID_PEER = 1;

type NativeAgree = (subscriberPublic: Buffer, senderPublicOut: Buffer, secretOut: Buffer) => number;

export function nativeAgreement(file: string): KeyAgreement {
  const { agree } = createRequire(import.meta.url)(file) as { agree: NativeAgree };
  return {
    kind: "native",
    agree(subscriberPublic, senderPublicOut, secretOut) {
      const status = agree(subscriberPublic, senderPublicOut, secretOut);
      if (status === AGREED) return true;
      if (status === INVALID_PEER) return false;
      throw new Error("P-256 key agreement failed in OpenSSL");
    },
  };
}

export function nodeCryptoAgreement(fallbackReason?: string): KeyAgreement {
  // generateKeys() makes a fresh key pair on every call (the test checks it), so one
  // context serves every message of this thread.
  const ecdh = createECDH("prime256v1");
  return {
    kind: "node:crypto",
    fallbackReason,
    agree(subscriberPublic, senderPublicOut, secretOut) {
      // As the addon: only an uncompressed point is a p256dh key (computeSecret would take a compressed one).
      if (subscriberPublic.length !== 65 || subscriberPublic[0] !== 4) return false;
      ecdh.generateKeys().copy(senderPublicOut);
      try {
        ecdh.computeSecret(subscriberPublic).copy(secretOut);
      } catch {
        return false;
      }
      return true;
    },
  };
}

/** The addon when it is built and loads, else node:crypto with the reason. */
export function loadKeyAgreement(): KeyAgreement {
  const file = path.join(packageDir("@herald/sender-webpush"), NATIVE_ADDON);
  try {
    return nativeAgreement(file);
  } catch (err) {
    const reason = (err as NodeJS.ErrnoException).code === "MODULE_NOT_FOUND" ? `${file} is not built` : String(err);
    return nodeCryptoAgreement(reason);
  }
}
