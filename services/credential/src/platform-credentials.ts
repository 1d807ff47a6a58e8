import { createECDH, createHash, createPrivateKey, generateKeyPairSync, type KeyObject } from "node:crypto";

/**
 * Validation of the push credentials users upload, so that a bad key fails at upload with
 * a message saying what is wrong rather than at the first send. Messages name fields the
 * way the REST API does and never repeat the submitted material.
 */

export type PlatformName = "ios" | "android" | "web";

export interface ApnsPublicData {
  keyId: string;
  teamId: string;
  topic: string;
  environment: "production" | "sandbox";
}
export interface FcmPublicData {
  projectId: string;
  clientEmail: string;
  tokenUri: string;
}
export interface VapidPublicData {
  publicKey: string;
  subject: string;
}

export type PublicData = ApnsPublicData | FcmPublicData | VapidPublicData;

/** Public parts are stored in clear; privateMaterial is what gets sealed. */
export type ValidatedCredentials =
  | { platform: "ios"; publicData: ApnsPublicData; privateMaterial: string }
  | { platform: "android"; publicData: FcmPublicData; privateMaterial: string }
  | { platform: "web"; publicData: VapidPublicData; privateMaterial: string };

/** The uploaded credentials are unusable; the message is safe to show to the caller. */
export class InvalidCredentialsError extends Error {
  override name = "InvalidCredentialsError";
}

const invalid = (message: string) => new InvalidCredentialsError(message);

const APPLE_ID = /^[A-Z0-9]{10}$/;
export const BUNDLE_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,254}$/;

export function validateApns(
  input: { p8Key: string; keyId: string; teamId: string; topic: string; environment: string },
  appBundleId: string,
): ValidatedCredentials {
  const p8 = input.p8Key.trim();
  if (!p8) throw invalid("apns_p8_key is required");
  const key = readPrivateKey(p8, "apns_p8_key is not a readable private key: expected the PEM block of the .p8 file");
  if (key.asymmetricKeyType !== "ec" || key.asymmetricKeyDetails?.namedCurve !== "prime256v1") {
    throw invalid(`apns_p8_key must be an EC P-256 (prime256v1) private key, got ${describeKey(key)}`);
  }
  const keyId = input.keyId.trim();
  if (!APPLE_ID.test(keyId)) {
    throw invalid(`apns_key_id must be exactly 10 characters A-Z or 0-9 (got ${keyId.length} characters)`);
  }
  const teamId = input.teamId.trim();
  if (!APPLE_ID.test(teamId)) {
    throw invalid(`apns_team_id must be exactly 10 characters A-Z or 0-9 (got ${teamId.length} characters)`);
  }
  const topic = input.topic.trim() || appBundleId;
  if (!BUNDLE_ID.test(topic)) throw invalid("apns_topic must be a bundle id such as com.example.app");
  const environment = input.environment.trim() || "production";
  if (environment !== "production" && environment !== "sandbox") {
    throw invalid('apns_environment must be "production" or "sandbox"');
  }
  return { platform: "ios", publicData: { keyId, teamId, topic, environment }, privateMaterial: p8 };
}

const SERVICE_ACCOUNT_FIELDS = ["project_id", "client_email", "private_key", "token_uri"] as const;

export function validateFcm(input: { serviceAccountJson: string }): ValidatedCredentials {
  const text = input.serviceAccountJson.trim();
  if (!text) throw invalid("fcm_service_account is required");
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    // JSON.parse errors quote the input, which holds the private key: never pass them on.
    throw invalid("fcm_service_account is not valid JSON");
  }
  if (typeof doc !== "object" || doc === null || Array.isArray(doc)) {
    throw invalid("fcm_service_account must be a JSON object (the service account key file)");
  }
  const account = doc as Record<string, unknown>;
  if (account.type !== undefined && account.type !== "service_account") {
    throw invalid('fcm_service_account has the wrong type: expected "service_account"');
  }
  const missing = SERVICE_ACCOUNT_FIELDS.filter(
    (f) => typeof account[f] !== "string" || !(account[f] as string).trim(),
  );
  if (missing.length > 0) throw invalid(`fcm_service_account is missing ${missing.join(", ")}`);
  const field = (f: (typeof SERVICE_ACCOUNT_FIELDS)[number]) => (account[f] as string).trim();

  const clientEmail = field("client_email");
  if (!/^[^@\s]+@[^@\s]+$/.test(clientEmail)) throw invalid("fcm_service_account client_email is not an email address");
  const key = readPrivateKey(field("private_key"), "fcm_service_account private_key is not a readable PEM private key");
  if (key.asymmetricKeyType !== "rsa") {
    throw invalid(`fcm_service_account private_key must be an RSA private key, got ${describeKey(key)}`);
  }
  const tokenUri = field("token_uri");
  if (!isHttpsUrl(tokenUri)) throw invalid("fcm_service_account token_uri must be an https URL");
  return {
    platform: "android",
    publicData: { projectId: field("project_id"), clientEmail, tokenUri },
    privateMaterial: text,
  };
}

const BASE64URL = /^[A-Za-z0-9_-]+={0,2}$/;

/** Validates a given VAPID pair, or generates one when both keys are empty. */
export function validateVapid(input: { publicKey: string; privateKey: string; subject: string }): ValidatedCredentials {
  const subject = input.subject.trim();
  if (!subject) throw invalid("vapid_subject is required (a mailto: or https: URL)");
  if (!isVapidSubject(subject)) throw invalid("vapid_subject must be a mailto: or https: URL");

  const givenPublic = input.publicKey.trim();
  const givenPrivate = input.privateKey.trim();
  if (!givenPublic && !givenPrivate) {
    const pair = generateVapidKeys();
    return { platform: "web", publicData: { publicKey: pair.publicKey, subject }, privateMaterial: pair.privateKey };
  }
  if (!givenPublic || !givenPrivate) {
    throw invalid(
      "vapid_public_key and vapid_private_key must be given together, or both left empty to generate a pair",
    );
  }
  const publicKey = decodeBase64Url(givenPublic);
  if (publicKey?.length !== 65 || publicKey[0] !== 0x04) {
    throw invalid("vapid_public_key must be a base64url uncompressed P-256 point (65 bytes starting with 0x04)");
  }
  const privateKey = decodeBase64Url(givenPrivate);
  if (privateKey?.length !== 32) throw invalid("vapid_private_key must be a base64url 32-byte P-256 private key");
  const ecdh = createECDH("prime256v1");
  try {
    ecdh.setPrivateKey(privateKey);
  } catch {
    throw invalid("vapid_private_key is not a valid P-256 private key");
  }
  if (!ecdh.getPublicKey().equals(publicKey)) throw invalid("vapid_private_key does not belong to vapid_public_key");
  return {
    platform: "web",
    publicData: { publicKey: publicKey.toString("base64url"), subject },
    privateMaterial: privateKey.toString("base64url"),
  };
}

/** Identifies private material without revealing it: hex of the first 16 bytes of SHA-256. */
export function fingerprint(privateMaterial: string): string {
  return createHash("sha256").update(privateMaterial, "utf8").digest().subarray(0, 16).toString("hex");
}

function generateVapidKeys(): { publicKey: string; privateKey: string } {
  // JWK export gives fixed-width coordinates and scalar (no stripped leading zeros).
  const jwk = generateKeyPairSync("ec", { namedCurve: "prime256v1" }).privateKey.export({ format: "jwk" });
  const point = Buffer.concat([
    Buffer.from([0x04]),
    Buffer.from(jwk.x ?? "", "base64url"),
    Buffer.from(jwk.y ?? "", "base64url"),
  ]);
  return { publicKey: point.toString("base64url"), privateKey: jwk.d ?? "" };
}

function readPrivateKey(pem: string, message: string): KeyObject {
  try {
    return createPrivateKey({ key: pem, format: "pem" });
  } catch {
    throw invalid(message);
  }
}

function describeKey(key: KeyObject): string {
  const curve = key.asymmetricKeyDetails?.namedCurve;
  return curve ? `an EC ${curve} key` : `an ${key.asymmetricKeyType ?? "unknown"} key`;
}

function decodeBase64Url(value: string): Buffer | undefined {
  return BASE64URL.test(value) ? Buffer.from(value.replace(/=+$/, ""), "base64url") : undefined;
}

function isHttpsUrl(value: string): boolean {
  try {
    const u = new URL(value);
    return u.protocol === "https:" && u.hostname !== "";
  } catch {
    return false;
  }
}

function isVapidSubject(value: string): boolean {
  if (value.startsWith("mailto:")) return /^mailto:[^@\s]+@[^@\s]+$/.test(value);
  return isHttpsUrl(value);
}
