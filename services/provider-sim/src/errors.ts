/** Bad input to the admin API, answered 400 with its message; messages never hold key material. */
export class InputError extends Error {
  override name = "InputError";
}
