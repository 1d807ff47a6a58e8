import { createECDH, generateKeyPairSync } from "node:crypto";
import { describe, expect, it } from "vitest";
import { makeApnsKey, makeServiceAccount, makeVapidKeys } from "../../../test/support/credential-fixtures.js";
import {
  fingerprint,
  InvalidCredentialsError,
  validateApns,
  validateFcm,
  validateVapid,
} from "./platform-credentials.js";

const pem = (type: "ec" | "rsa", namedCurve?: string) =>
  (type === "ec"
    ? generateKeyPairSync("ec", { namedCurve: namedCurve ?? "prime256v1" })
    : generateKeyPairSync("rsa", { modulusLength: 2048 })
  ).privateKey
    .export({ type: "pkcs8", format: "pem" })
    .toString();

/** A line from the middle of a PEM block: what a leaked key would show. */
const pemBody = (p: string) => p.split("\n")[1] ?? p;

/** Asserts the validator rejects with a message matching `message` that echoes none of `secrets`. */
function expectInvalid(fn: () => unknown, message: RegExp, ...secrets: string[]): void {
  let caught: unknown;
  try {
    fn();
  } catch (err) {
    caught = err;
  }
  expect(caught).toBeInstanceOf(InvalidCredentialsError);
  expect((caught as Error).message).toMatch(message);
  for (const secret of secrets) expect((caught as Error).message).not.toContain(secret);
}

describe("validateApns", () => {
  const good = () => {
    const k = makeApnsKey();
    return { p8Key: k.p8, keyId: k.keyId, teamId: k.teamId, topic: "", environment: "" };
  };

  it("accepts a P-256 p8 and defaults topic and environment", () => {
    const input = good();
    const v = validateApns(input, "com.example.app");
    expect(v.platform).toBe("ios");
    expect(v.publicData).toEqual({
      keyId: input.keyId,
      teamId: input.teamId,
      topic: "com.example.app",
      environment: "production",
    });
    expect(v.privateMaterial).toBe(input.p8Key.trim());
  });

  it("keeps an explicit topic and the sandbox environment", () => {
    const v = validateApns({ ...good(), topic: "com.example.app.voip", environment: "sandbox" }, "com.example.app");
    expect(v.publicData).toMatchObject({ topic: "com.example.app.voip", environment: "sandbox" });
  });

  it("rejects a P-384 key, an RSA key, garbage and an empty key", () => {
    const p384 = pem("ec", "secp384r1");
    expectInvalid(() => validateApns({ ...good(), p8Key: p384 }, "a.b"), /P-256.*secp384r1/, pemBody(p384));
    const rsa = pem("rsa");
    expectInvalid(() => validateApns({ ...good(), p8Key: rsa }, "a.b"), /P-256.*rsa/, pemBody(rsa));
    const garbage =
      "-----BEGIN PRIVATE KEY-----\nbm90IGEga2V5IGF0IGFsbCwganVzdCBzb21lIHRleHQgaGVyZQ==\n-----END PRIVATE KEY-----";
    expectInvalid(
      () => validateApns({ ...good(), p8Key: garbage }, "a.b"),
      /apns_p8_key is not a readable private key/,
      pemBody(garbage),
    );
    expectInvalid(() => validateApns({ ...good(), p8Key: "  " }, "a.b"), /apns_p8_key is required/);
  });

  it("rejects key ids and team ids that are not 10 characters A-Z0-9", () => {
    expectInvalid(() => validateApns({ ...good(), keyId: "ABC123" }, "a.b"), /apns_key_id .* \(got 6 characters\)/);
    expectInvalid(() => validateApns({ ...good(), keyId: "abc123defg" }, "a.b"), /apns_key_id/);
    expectInvalid(
      () => validateApns({ ...good(), teamId: "ABCDEFGHIJK" }, "a.b"),
      /apns_team_id .* \(got 11 characters\)/,
    );
  });

  it("rejects a bad environment or topic", () => {
    expectInvalid(() => validateApns({ ...good(), environment: "development" }, "a.b"), /apns_environment/);
    expectInvalid(() => validateApns({ ...good(), topic: "not a topic" }, "a.b"), /apns_topic/);
  });
});

describe("validateFcm", () => {
  const account = makeServiceAccount({ projectId: "herald-unit" });
  const withFields = (change: Record<string, unknown>) =>
    JSON.stringify({ ...(JSON.parse(account.json) as object), ...change });

  it("accepts a service account and keeps the whole document as private material", () => {
    const v = validateFcm({ serviceAccountJson: account.json });
    expect(v.publicData).toEqual({
      projectId: "herald-unit",
      clientEmail: account.clientEmail,
      tokenUri: "https://oauth2.googleapis.com/token",
    });
    expect(v.privateMaterial).toBe(account.json);
  });

  it("accepts a document without a type field", () => {
    expect(validateFcm({ serviceAccountJson: withFields({ type: undefined }) }).platform).toBe("android");
  });

  it("names the missing fields", () => {
    const json = withFields({ project_id: undefined, token_uri: "" });
    expectInvalid(() => validateFcm({ serviceAccountJson: json }), /missing project_id, token_uri$/);
  });

  it("rejects broken JSON without quoting it", () => {
    const broken = account.json.slice(0, -2);
    expectInvalid(
      () => validateFcm({ serviceAccountJson: broken }),
      /^fcm_service_account is not valid JSON$/,
      pemBody(account.privateKeyPem),
    );
    expectInvalid(() => validateFcm({ serviceAccountJson: "[1,2]" }), /must be a JSON object/);
    expectInvalid(() => validateFcm({ serviceAccountJson: "" }), /required/);
  });

  it("rejects a wrong type, a non-RSA or unreadable key, a bad email and a non-https token_uri", () => {
    expectInvalid(
      () => validateFcm({ serviceAccountJson: withFields({ type: "authorized_user" }) }),
      /"service_account"/,
    );
    const ec = pem("ec");
    expectInvalid(
      () => validateFcm({ serviceAccountJson: withFields({ private_key: ec }) }),
      /must be an RSA private key/,
      pemBody(ec),
    );
    expectInvalid(
      () => validateFcm({ serviceAccountJson: withFields({ private_key: "MIIE..." }) }),
      /not a readable PEM/,
    );
    expectInvalid(() => validateFcm({ serviceAccountJson: withFields({ client_email: "nobody" }) }), /client_email/);
    expectInvalid(
      () => validateFcm({ serviceAccountJson: withFields({ token_uri: "http://oauth2.googleapis.com/token" }) }),
      /token_uri must be an https URL/,
    );
  });
});

describe("validateVapid", () => {
  it("generates a valid pair when both keys are empty", () => {
    const v = validateVapid({ publicKey: "", privateKey: "", subject: "mailto:ops@example.com" });
    if (v.platform !== "web") throw new Error("expected web");
    const pub = Buffer.from(v.publicData.publicKey, "base64url");
    const priv = Buffer.from(v.privateMaterial, "base64url");
    expect(pub).toHaveLength(65);
    expect(pub[0]).toBe(0x04);
    expect(priv).toHaveLength(32);
    const ecdh = createECDH("prime256v1");
    ecdh.setPrivateKey(priv);
    expect(ecdh.getPublicKey().equals(pub)).toBe(true);
  });

  it("accepts a given pair and an https subject", () => {
    const keys = makeVapidKeys();
    const v = validateVapid({ ...keys, subject: "https://example.com/contact" });
    expect(v.publicData).toEqual({ publicKey: keys.publicKey, subject: "https://example.com/contact" });
    expect(v.privateMaterial).toBe(keys.privateKey);
  });

  it("rejects a mismatched pair without echoing the private key", () => {
    const a = makeVapidKeys();
    const b = makeVapidKeys();
    expectInvalid(
      () => validateVapid({ publicKey: a.publicKey, privateKey: b.privateKey, subject: "mailto:a@b.c" }),
      /does not belong/,
      b.privateKey,
    );
  });

  it("rejects keys of the wrong size or encoding, and half a pair", () => {
    const k = makeVapidKeys();
    const subject = "mailto:a@b.c";
    const compressed = Buffer.from(k.publicKey, "base64url").subarray(0, 33).toString("base64url");
    expectInvalid(() => validateVapid({ ...k, publicKey: compressed, subject }), /65 bytes/);
    expectInvalid(() => validateVapid({ ...k, publicKey: "not base64!", subject }), /vapid_public_key/);
    expectInvalid(() => validateVapid({ ...k, privateKey: k.privateKey.slice(0, 20), subject }), /32-byte/);
    expectInvalid(
      () => validateVapid({ ...k, privateKey: Buffer.alloc(32).toString("base64url"), subject }),
      /not a valid P-256/,
    );
    expectInvalid(() => validateVapid({ publicKey: k.publicKey, privateKey: "", subject }), /given together/);
  });

  it("requires a mailto: or https: subject", () => {
    const k = makeVapidKeys();
    expectInvalid(() => validateVapid({ ...k, subject: "" }), /vapid_subject is required/);
    expectInvalid(() => validateVapid({ ...k, subject: "http://example.com" }), /mailto: or https:/);
    expectInvalid(() => validateVapid({ ...k, subject: "mailto:nobody" }), /mailto: or https:/);
    expectInvalid(() => validateVapid({ ...k, subject: "ops@example.com" }), /mailto: or https:/);
  });
});

describe("fingerprint", () => {
  it("is 32 hex characters, stable, and differs between materials", () => {
    expect(fingerprint("a")).toMatch(/^[0-9a-f]{32}$/);
    expect(fingerprint("a")).toBe(fingerprint("a"));
    expect(fingerprint("a")).not.toBe(fingerprint("b"));
  });
});
