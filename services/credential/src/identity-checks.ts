import { invalidArgument } from "@herald/runtime";
import { EMAIL_RULE, normaliseEmail, passwordProblem } from "./password-policy.js";

/**
 * Checks of IdentityService request fields. Each returns the normalised value or throws
 * INVALID_ARGUMENT naming the field; none repeats a password or token back.
 */

export function email(value: string, field = "email"): string {
  const normalised = normaliseEmail(value);
  if (normalised === undefined) throw invalidArgument(`${field} ${EMAIL_RULE}`);
  return normalised;
}

export function newPassword(value: string, field = "password"): string {
  const problem = passwordProblem(value);
  if (problem) throw invalidArgument(`${field} ${problem}`);
  return value;
}

/** A person's display name: optional, at most 200 characters. */
export function personName(value: string): string {
  const name = value.trim();
  if (name.length > 200) throw invalidArgument("name must be at most 200 characters");
  return name;
}

export function orgName(value: string): string {
  const name = value.trim();
  if (name.length < 1 || name.length > 200) throw invalidArgument("name must be 1 to 200 characters");
  return name;
}

export function clientName(value: string): string {
  const name = value.trim();
  if (name.length < 1 || name.length > 100) throw invalidArgument("name must be 1 to 100 characters");
  return name;
}

/** oidc-provider's model names (Session, AuthorizationCode, RefreshToken...). */
const MODEL_KIND = /^[A-Za-z]{1,64}$/;
export function modelKind(value: string): string {
  if (!MODEL_KIND.test(value)) throw invalidArgument("kind must be 1 to 64 letters");
  return value;
}

export function modelKey(value: string, field: string): string {
  if (value.length < 1 || value.length > 512) throw invalidArgument(`${field} must be 1 to 512 characters`);
  return value;
}

/** Optional lookup keys: unset or empty is "none". */
export const optionalKey = (value: string | undefined, field: string): string | null =>
  value ? modelKey(value, field) : null;

/** A JSON object, as oidc-provider's models are. */
export function modelPayload(value: string): string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    throw invalidArgument("payload must be JSON");
  }
  if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) {
    throw invalidArgument("payload must be a JSON object");
  }
  return value;
}
