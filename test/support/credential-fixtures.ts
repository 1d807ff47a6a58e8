import { generateKeyPairSync, randomBytes, randomInt } from "node:crypto";

/**
 * Real-format push credentials for tests of any service: freshly generated keys, so no
 * test ever carries a committed private key, and validators see exactly what users
 * paste in.
 */

const UPPER_ALNUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";

function appleId(): string {
  let id = "";
  for (let i = 0; i < 10; i++) id += UPPER_ALNUM[randomInt(UPPER_ALNUM.length)];
  return id;
}

/** An APNs token-auth key as Apple's .p8 download holds it: P-256, PKCS#8 PEM. */
export function makeApnsKey(): { p8: string; keyId: string; teamId: string } {
  const { privateKey } = generateKeyPairSync("ec", { namedCurve: "prime256v1" });
  return {
    p8: privateKey.export({ type: "pkcs8", format: "pem" }).toString(),
    keyId: appleId(),
    teamId: appleId(),
  };
}

/** The `POST /v1/apps/{id}/platform-config` body that stores an APNs key for a topic. */
export function apnsPlatformConfig(
  key: { p8: string; keyId: string; teamId: string },
  topic: string,
  environment?: "production" | "sandbox",
): Record<string, unknown> {
  return {
    platform: "ios",
    apns_p8_key: key.p8,
    apns_key_id: key.keyId,
    apns_team_id: key.teamId,
    apns_topic: topic,
    ...(environment ? { apns_environment: environment } : {}),
  };
}

/** A Google service-account key file, shaped like the one the Cloud console downloads. */
export function makeServiceAccount(opts: { tokenUri?: string; projectId?: string } = {}): {
  json: string;
  privateKeyPem: string;
  clientEmail: string;
  projectId: string;
} {
  const projectId = opts.projectId ?? `herald-test-${randomBytes(3).toString("hex")}`;
  const { privateKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
  const privateKeyPem = privateKey.export({ type: "pkcs8", format: "pem" }).toString();
  const clientEmail = `herald-push@${projectId}.iam.gserviceaccount.com`;
  const document = {
    type: "service_account",
    project_id: projectId,
    private_key_id: randomBytes(20).toString("hex"),
    private_key: privateKeyPem,
    client_email: clientEmail,
    client_id: String(randomInt(1e9, 1e10 - 1)) + String(randomInt(1e10, 1e11 - 1)),
    auth_uri: "https://accounts.google.com/o/oauth2/auth",
    token_uri: opts.tokenUri ?? "https://oauth2.googleapis.com/token",
    auth_provider_x509_cert_url: "https://www.googleapis.com/oauth2/v1/certs",
    client_x509_cert_url: `https://www.googleapis.com/robot/v1/metadata/x509/${encodeURIComponent(clientEmail)}`,
    universe_domain: "googleapis.com",
  };
  return { json: JSON.stringify(document, null, 2), privateKeyPem, clientEmail, projectId };
}

/** A VAPID pair as web-push libraries print it: base64url point (65 bytes) and scalar (32). */
export function makeVapidKeys(): { publicKey: string; privateKey: string } {
  const { privateKey } = generateKeyPairSync("ec", { namedCurve: "prime256v1" });
  const jwk = privateKey.export({ format: "jwk" });
  const point = Buffer.concat([
    Buffer.from([0x04]),
    Buffer.from(jwk.x!, "base64url"),
    Buffer.from(jwk.y!, "base64url"),
  ]);
  return { publicKey: point.toString("base64url"), privateKey: jwk.d! };
}
