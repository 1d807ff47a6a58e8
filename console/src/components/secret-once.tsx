import { Alert, Button, Code, CopyButton, Group, Stack, Text } from "@mantine/core";
import type { ReactNode } from "react";

interface SecretOnceProps {
  label: string;
  value: string;
  what: string;
  /** The button that closes the dialog once the secret is copied. */
  done: { label: string; onClick: () => void };
  /** What to do with the secret, above it. */
  children?: ReactNode;
}

/**
 * A secret shown exactly once, with a copy button, a warning that it cannot be shown again
 * and the button that closes the dialog.
 */
export function SecretOnce({ label, value, what, done, children }: SecretOnceProps) {
  return (
    <Stack>
      {children && <Text>{children}</Text>}
      <SecretValue label={label} value={value} what={what} />
      <Group justify="flex-end">
        <Button onClick={done.onClick}>{done.label}</Button>
      </Group>
    </Stack>
  );
}

function SecretValue({ label, value, what }: { label: string; value: string; what: string }) {
  return (
    <Stack gap="sm">
      <Alert color="yellow" variant="light" title={`Copy the ${what} now`} role="status">
        This is the only time it is shown. Herald stores a hash, not the {what}: if it is lost, create a new one.
      </Alert>
      <Text fw={600} size="sm">
        {label}
      </Text>
      <Code block data-testid="secret-value" style={{ wordBreak: "break-all", whiteSpace: "pre-wrap" }}>
        {value}
      </Code>
      <Group>
        <CopyButton value={value}>
          {({ copied, copy }) => (
            <Button onClick={copy} color={copied ? "teal" : "blue"} aria-label={`Copy ${label}`}>
              {copied ? "Copied" : "Copy"}
            </Button>
          )}
        </CopyButton>
      </Group>
    </Stack>
  );
}
