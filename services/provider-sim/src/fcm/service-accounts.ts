import { createPublicKey, generateKeyPairSync, randomBytes, randomInt, type KeyObject } from "node:crypto";
import { InputError } from "../errors.js";

/** A service account as Google holds it: only the public half of its key. */
export interface ServiceAccount {
  clientEmail: string;
  projectId: string;
  /** The key's id (the assertion's `kid`); null when registered without one, and then `kid` is not checked. */
  privateKeyId: string | null;
  publicKey: KeyObject;
  tokensIssued: number;
}

export interface ServiceAccountView {
  client_email: string;
  project_id: string;
  private_key_id: string | null;
  token_uri: string;
  tokens_issued: number;
}

/** The service-account JSON a Firebase console download holds, with `token_uri` pointing at the simulator. */
export interface ServiceAccountJson {
  type: "service_account";
  project_id: string;
  private_key_id: string;
  private_key: string;
  client_email: string;
  client_id: string;
  auth_uri: string;
  token_uri: string;
  auth_provider_x509_cert_url: string;
  client_x509_cert_url: string;
  universe_domain: string;
}

/** Google project ids: 6–30 lowercase letters, digits and hyphens, starting with a letter, not ending with a hyphen. */
const PROJECT_ID = /^[a-z][a-z0-9-]{4,28}[a-z0-9]$/;
const EMAIL = /^[^@\s]+@[^@\s]+$/;
const KEY_ID = /^[A-Za-z0-9_-]{1,100}$/;

/**
 * Service accounts registered through the admin API, by client email. Deleting one
 * revokes it: its assertions get invalid_grant and its access tokens stop working.
 */
export class ServiceAccountStore {
  private readonly accounts = new Map<string, ServiceAccount>();

  constructor(private readonly tokenUri: string) {}

  /**
   * `{project_id, client_email?, private_key? | public_key?, private_key_id?}`. With no
   * key the simulator makes an RSA key pair and answers, once, with a complete
   * service-account JSON; a private key given is reduced to its public half and never kept.
   */
  register(body: unknown): { account: ServiceAccountView; service_account?: ServiceAccountJson } {
    const input = (typeof body === "object" && body !== null ? body : {}) as Record<string, unknown>;
    const { project_id: projectId, private_key: privatePem, public_key: publicPem } = input;
    if (typeof projectId !== "string" || !PROJECT_ID.test(projectId)) {
      throw new InputError("project_id must be a Google project id (6-30 of a-z 0-9 -, starting with a letter)");
    }
    const clientEmail =
      input.client_email ?? `herald-${randomBytes(4).toString("hex")}@${projectId}.iam.gserviceaccount.com`;
    if (typeof clientEmail !== "string" || !EMAIL.test(clientEmail))
      throw new InputError("client_email must be an email address");
    const keyId =
      input.private_key_id ??
      (privatePem === undefined && publicPem === undefined ? randomBytes(20).toString("hex") : null);
    if (keyId !== null && (typeof keyId !== "string" || !KEY_ID.test(keyId)))
      throw new InputError("private_key_id must be a key id");
    if (privatePem !== undefined && publicPem !== undefined)
      throw new InputError("give at most one of private_key and public_key");

    let generatedPem: string | undefined;
    let publicKey: KeyObject;
    if (privatePem === undefined && publicPem === undefined) {
      const pair = generateKeyPairSync("rsa", { modulusLength: 2048 });
      generatedPem = pair.privateKey.export({ type: "pkcs8", format: "pem" }) as string;
      publicKey = pair.publicKey;
    } else {
      const pem = privatePem ?? publicPem;
      if (typeof pem !== "string") throw new InputError("the key must be PEM text");
      try {
        publicKey = createPublicKey(pem);
      } catch {
        throw new InputError("the key must be a PEM RSA public key or PKCS#8 private key");
      }
    }
    if (publicKey.asymmetricKeyType !== "rsa" || (publicKey.asymmetricKeyDetails?.modulusLength ?? 0) < 2048) {
      throw new InputError("the key must be an RSA key of at least 2048 bits (RS256)");
    }
    const account: ServiceAccount = { clientEmail, projectId, privateKeyId: keyId, publicKey, tokensIssued: 0 };
    this.accounts.set(clientEmail, account);
    const view = this.view(account);
    if (generatedPem === undefined) return { account: view };
    return { account: view, service_account: this.json(account, generatedPem) };
  }

  get(clientEmail: string): ServiceAccount | undefined {
    return this.accounts.get(clientEmail);
  }

  revoke(clientEmail: string): boolean {
    return this.accounts.delete(clientEmail);
  }

  list(): ServiceAccountView[] {
    return [...this.accounts.values()].map((a) => this.view(a));
  }

  private view(a: ServiceAccount): ServiceAccountView {
    return {
      client_email: a.clientEmail,
      project_id: a.projectId,
      private_key_id: a.privateKeyId,
      token_uri: this.tokenUri,
      tokens_issued: a.tokensIssued,
    };
  }

  private json(a: ServiceAccount, privateKey: string): ServiceAccountJson {
    return {
      type: "service_account",
      project_id: a.projectId,
      private_key_id: a.privateKeyId!,
      private_key: privateKey,
      client_email: a.clientEmail,
      client_id: String(randomInt(1e9, 1e12 - 1)),
      auth_uri: "https://accounts.google.com/o/oauth2/auth",
      token_uri: this.tokenUri,
      auth_provider_x509_cert_url: "https://www.googleapis.com/oauth2/v1/certs",
      client_x509_cert_url: `https://www.googleapis.com/robot/v1/metadata/x509/${encodeURIComponent(a.clientEmail)}`,
      universe_domain: "googleapis.com",
    };
  }
}
