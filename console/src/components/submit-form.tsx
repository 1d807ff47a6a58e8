import { Button, Group, Text } from "@mantine/core";
import { type ReactNode, useCallback, useState } from "react";
import { errorMessage } from "../api/herald";

/**
 * A form's sending: `run(send)` clears the error and runs `send` with `busy` set; what it
 * throws (the API's answer) becomes `error`, and `run` answers whether it went through.
 * A check of the form's own reports with `setError`.
 */
export function useSubmit() {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string>();
  const run = useCallback(async (send: () => Promise<unknown>): Promise<boolean> => {
    setError(undefined);
    setBusy(true);
    try {
      await send();
      return true;
    } catch (err) {
      setError(errorMessage(err));
      return false;
    } finally {
      setBusy(false);
    }
  }, []);
  return { busy, error, setError, run };
}

/** A form submitted by its handler alone: no browser validation, no navigation. */
export function SubmitForm({ onSubmit, children }: { onSubmit: () => unknown; children: ReactNode }) {
  return (
    <form
      noValidate
      onSubmit={(e) => {
        e.preventDefault();
        void onSubmit();
      }}
    >
      {children}
    </form>
  );
}

/** Why a form was not sent (a check of its own or the API's message). */
export function FormError({ error }: { error: string | undefined }) {
  if (!error) return null;
  return (
    <Text role="alert" c="red.8" size="sm">
      {error}
    </Text>
  );
}

/** The end of a dialog's form: Cancel, and the submit button. */
export function FormActions({ onCancel, busy, submit }: { onCancel: () => void; busy: boolean; submit: string }) {
  return (
    <Group justify="flex-end">
      <Button variant="default" onClick={onCancel}>
        Cancel
      </Button>
      <Button type="submit" loading={busy}>
        {submit}
      </Button>
    </Group>
  );
}
