import { Button, Group, Modal, Text } from "@mantine/core";
import type { FetchResult } from "@herald/client";
import { useState, type ReactNode } from "react";
import { attempt } from "./feedback";

interface ConfirmButtonProps {
  /** The button's text, e.g. "Delete". */
  label: string;
  /** Accessible name when the label alone is ambiguous in a list, e.g. "Delete app Acme". */
  ariaLabel?: string;
  title: string;
  children: ReactNode;
  confirmLabel?: string;
  /** The API call confirmed; a failure is reported as a notification (attempt). */
  call: () => Promise<FetchResult<unknown>>;
  /** The notification of a success. */
  success: string;
  /** Runs after the call, whatever it answered (a reload of what it changed). */
  onDone: () => void;
  disabled?: boolean;
  color?: string;
  size?: string;
}

/** A destructive API call behind a confirmation dialog. */
export function ConfirmButton(props: ConfirmButtonProps) {
  const [open, setOpen] = useState(false);
  const [busy, setBusy] = useState(false);
  const color = props.color ?? "red";
  return (
    <>
      <Button
        variant="light"
        color={color}
        size={props.size ?? "xs"}
        disabled={props.disabled}
        aria-label={props.ariaLabel}
        onClick={() => setOpen(true)}
      >
        {props.label}
      </Button>
      <Modal opened={open} onClose={() => setOpen(false)} title={props.title} centered>
        <Text mb="md">{props.children}</Text>
        <Group justify="flex-end">
          <Button variant="default" onClick={() => setOpen(false)}>
            Keep it
          </Button>
          <Button
            color={color}
            loading={busy}
            onClick={async () => {
              setBusy(true);
              try {
                await attempt(props.call, props.success).then(props.onDone);
              } finally {
                setBusy(false);
                setOpen(false);
              }
            }}
          >
            {props.confirmLabel ?? props.label}
          </Button>
        </Group>
      </Modal>
    </>
  );
}
