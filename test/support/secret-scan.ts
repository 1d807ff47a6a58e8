/**
 * Shapes of secrets that must never appear in a log line or a metric of a Herald
 * process, whatever the test did: full API keys, PEM private keys (APNs p8, service
 * accounts), a service account's private_key field, private JWK parts (signing keys,
 * VAPID). Findings name the shape and where, never the secret.
 */
const SHAPES: [string, RegExp][] = [
  ["an API key", /\bhk_(?:live|pub)_[A-Za-z0-9]{32,}/],
  // Newlines may be escaped (\\n) inside a JSON log line.
  ["a PEM private key", /-----BEGIN (?:[A-Z]+ )?PRIVATE KEY-----(?:\s|\\r|\\n)*[A-Za-z0-9+/=]{16,}/],
  ["a service account private_key", /\\?"private_key\\?"\s*:\s*\\?"-----BEGIN/],
  ["a private JWK part", /\\?"d\\?"\s*:\s*\\?"[A-Za-z0-9_-]{40,}\\?"/],
];

export function findSecrets(text: string, where: string): string[] {
  const found: string[] = [];
  for (const [name, shape] of SHAPES) {
    const match = shape.exec(text);
    if (!match) continue;
    const line = text.slice(0, match.index).split("\n").length;
    found.push(`${name} in ${where}, line ${line}`);
  }
  return found;
}
