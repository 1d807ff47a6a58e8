import { Code, ConnectError } from "@connectrpc/connect";

/**
 * Services signal client-facing failures with ConnectError. The gateway maps the code to
 * an HTTP status and the API's error name (docs/design.md §3 Errors); `herald-error`
 * metadata overrides the name where the contract wants a more specific one (e.g.
 * CampaignNotCancellable).
 */
export const ERROR_NAME_HEADER = "herald-error";

function make(code: Code, message: string, name?: string): ConnectError {
  const err = new ConnectError(message, code);
  if (name) err.metadata.set(ERROR_NAME_HEADER, name);
  return err;
}

export const invalidArgument = (message: string, name?: string) => make(Code.InvalidArgument, message, name);
export const notFound = (message: string) => make(Code.NotFound, message);
export const alreadyExists = (message: string, name?: string) => make(Code.AlreadyExists, message, name);
export const failedPrecondition = (message: string, name?: string) => make(Code.FailedPrecondition, message, name);
export const permissionDenied = (message: string) => make(Code.PermissionDenied, message);
export const unauthenticated = (message: string) => make(Code.Unauthenticated, message);
export const resourceExhausted = (message: string) => make(Code.ResourceExhausted, message);
/** A conflict with the resource's state (e.g. cancelling a campaign already sending): 409. */
export const aborted = (message: string, name?: string) => make(Code.Aborted, message, name);

export { Code, ConnectError };
