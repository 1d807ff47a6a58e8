/**
 * The password and email policies, with no hashing here so that config parsing does not
 * load argon2. No function here puts a password into its answer.
 */

export const PASSWORD_MIN = 12;
export const PASSWORD_MAX = 256;
export const PASSWORD_RULE = `must be ${PASSWORD_MIN} to ${PASSWORD_MAX} characters`;

/** The policy's complaint about a password, or undefined when it is acceptable. */
export function passwordProblem(password: string): string | undefined {
  const length = [...password].length;
  if (length < PASSWORD_MIN || length > PASSWORD_MAX) return PASSWORD_RULE;
  if (password.trim() === "") return "must not be only spaces";
  return undefined;
}

const EMAIL = /^[^\s@]{1,64}@[^\s@.]+(\.[^\s@.]+)+$/;
export const EMAIL_RULE = "must be an email address";

/** Trimmed and lower-cased, or undefined when it does not look like an email address. */
export function normaliseEmail(value: string): string | undefined {
  const email = value.trim().toLowerCase();
  return email.length <= 254 && EMAIL.test(email) ? email : undefined;
}
