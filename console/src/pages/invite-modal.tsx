import { Button, Group, Modal, Select, Stack, Text, TextInput } from "@mantine/core";
import { useState } from "react";
import { type Schemas, unwrap } from "@herald/client";
import { errorMessage, herald } from "../api/herald";
import { SecretOnce } from "../components/secret-once";
import { ROLES, type Role } from "../roles";

/** Email and role in; the invitation link out, shown once. */
export function InviteModal({ onClose }: { onClose: () => void }) {
  const [email, setEmail] = useState("");
  const [role, setRole] = useState<Role>("developer");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string>();
  const [created, setCreated] = useState<Schemas["CreatedInvitation"]>();

  const submit = async () => {
    setError(undefined);
    if (!/^[^\s@]+@[^\s@]+$/.test(email.trim())) return setError("Enter the email address to invite.");
    setBusy(true);
    try {
      setCreated(unwrap(await herald.POST("/v1/invitations", { body: { email: email.trim(), role } })));
    } catch (err) {
      setError(errorMessage(err));
    } finally {
      setBusy(false);
    }
  };

  return (
    <Modal opened onClose={onClose} title={created ? "Invitation created" : "Invite a member"} centered size="lg">
      {created ? (
        <Stack>
          <Text>
            Send this link to {created.email}. It makes them {created.role} of this organization and expires{" "}
            {new Date(created.expires_at).toLocaleString()}.
          </Text>
          <SecretOnce label="Invitation link" value={created.accept_url} what="link" />
          <Group justify="flex-end">
            <Button onClick={onClose}>Done</Button>
          </Group>
        </Stack>
      ) : (
        <form
          noValidate
          onSubmit={(e) => {
            e.preventDefault();
            void submit();
          }}
        >
          <Stack>
            <TextInput
              label="Email"
              type="email"
              required
              data-autofocus
              value={email}
              onChange={(e) => setEmail(e.currentTarget.value)}
            />
            <Select
              label="Role"
              data={ROLES.map((r) => ({ value: r, label: r }))}
              value={role}
              onChange={(v) => v && setRole(v as Role)}
              allowDeselect={false}
            />
            {error && (
              <Text role="alert" c="red.8" size="sm">
                {error}
              </Text>
            )}
            <Group justify="flex-end">
              <Button variant="default" onClick={onClose}>
                Cancel
              </Button>
              <Button type="submit" loading={busy}>
                Create invitation
              </Button>
            </Group>
          </Stack>
        </form>
      )}
    </Modal>
  );
}
