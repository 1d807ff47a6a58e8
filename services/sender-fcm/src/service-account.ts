import { createHash, createPrivateKey, type KeyObject } from "node:crypto";
import { CredentialsError } from "@herald/sender";

/** What the sender needs of a Google service-account key file, parsed once per credentials load. */
export interface ServiceAccount {
  projectId: string;
  clientEmail: string;
  privateKey: KeyObject;
  /** private_key_id as given: the `kid` of the assertions. */
  privateKeyId: string | undefined;
  /** private_key_id, or a hash of the key when the file has none: tells rotated keys apart. */
  keyId: string;
  /** Where access tokens come from: Google's, or whatever https host the file names. */
  tokenUri: string;
}

/**
 * Parses the key file the credential service stored. The credential service validated
 * it at upload, but the sender must not trust that blindly: anything unusable becomes a
 * CredentialsError whose message never quotes the document (it holds the private key).
 */
export function parseServiceAccount(json: string): ServiceAccount {
  let doc: unknown;
  try {
    doc = JSON.parse(json);
  } catch {
    throw new CredentialsError("the service account is not valid JSON");
  }
  if (typeof doc !== "object" || doc === null || Array.isArray(doc)) {
    throw new CredentialsError("the service account is not a JSON object");
  }
  const d = doc as Record<string, unknown>;
  const text = (k: string) => (typeof d[k] === "string" ? (d[k] as string).trim() : "");
  const missing = ["project_id", "client_email", "private_key", "token_uri"].filter((k) => !text(k));
  if (missing.length > 0) throw new CredentialsError(`the service account is missing ${missing.join(", ")}`);

  let tokenUri: URL;
  try {
    tokenUri = new URL(text("token_uri"));
  } catch {
    throw new CredentialsError("the service account token_uri is not a URL");
  }
  if (tokenUri.protocol !== "https:") throw new CredentialsError("the service account token_uri must be https");

  let privateKey: KeyObject;
  try {
    privateKey = createPrivateKey(text("private_key"));
  } catch {
    throw new CredentialsError("the service account private_key is not a readable PEM key");
  }
  if (privateKey.asymmetricKeyType !== "rsa")
    throw new CredentialsError("the service account private_key is not an RSA key");

  return {
    projectId: text("project_id"),
    clientEmail: text("client_email"),
    privateKey,
    privateKeyId: text("private_key_id") || undefined,
    keyId: text("private_key_id") || createHash("sha256").update(text("private_key")).digest("hex").slice(0, 32),
    tokenUri: tokenUri.href,
  };
}
