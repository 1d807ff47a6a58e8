import { Alert, Center, Loader } from "@mantine/core";
import { notifications } from "@mantine/notifications";
import { type FetchResult, unwrap } from "@herald/client";
import { errorMessage } from "../api/herald";

export function ErrorAlert({ error, title = "Something went wrong" }: { error: unknown; title?: string }) {
  if (!error) return null;
  return (
    <Alert color="red" title={title} role="alert" variant="light">
      {errorMessage(error)}
    </Alert>
  );
}

export function Loading({ label = "Loading" }: { label?: string }) {
  return (
    <Center py="xl">
      <Loader aria-label={label} />
    </Center>
  );
}

export function notifySuccess(message: string): void {
  notifications.show({ color: "green", message });
}

export function notifyError(err: unknown, title = "That did not work"): void {
  notifications.show({ color: "red", title, message: errorMessage(err), autoClose: 8000 });
}

/** Makes an API call, reporting an error answer or failure as a notification; true when it succeeded. */
export async function attempt(call: () => Promise<FetchResult<unknown>>, success?: string): Promise<boolean> {
  try {
    unwrap(await call());
    if (success) notifySuccess(success);
    return true;
  } catch (err) {
    notifyError(err);
    return false;
  }
}
