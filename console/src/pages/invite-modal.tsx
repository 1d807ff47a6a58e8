import { Modal, Select, Stack, TextInput } from "@mantine/core";
import { useState } from "react";
import { type Schemas, unwrap } from "@herald/client";
import { herald } from "../api/herald";
import { SecretOnce } from "../components/secret-once";
import { FormActions, FormError, SubmitForm, useSubmit } from "../components/submit-form";
import { ROLES, type Role } from "../roles";

/** Email and role in; the invitation link out, shown once. */
export function InviteModal({ onClose }: { onClose: () => void }) {
  const [email, setEmail] = useState("");
  const [role, setRole] = useState<Role>("developer");
  const { busy, error, setError, run } = useSubmit();
  const [created, setCreated] = useState<Schemas["CreatedInvitation"]>();

  const submit = () => {
    if (!/^[^\s@]+@[^\s@]+$/.test(email.trim())) return setError("Enter the email address to invite.");
    return run(async () =>
      setCreated(unwrap(await herald.POST("/v1/invitations", { body: { email: email.trim(), role } }))),
    );
  };

  return (
    <Modal opened onClose={onClose} title={created ? "Invitation created" : "Invite a member"} centered size="lg">
      {created ? (
        <SecretOnce
          label="Invitation link"
          value={created.accept_url}
          what="link"
          done={{ label: "Done", onClick: onClose }}
        >
          Send this link to {created.email}. It makes them {created.role} of this organization and expires{" "}
          {new Date(created.expires_at).toLocaleString()}.
        </SecretOnce>
      ) : (
        <SubmitForm onSubmit={submit}>
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
            <FormError error={error} />
            <FormActions onCancel={onClose} busy={busy} submit="Create invitation" />
          </Stack>
        </SubmitForm>
      )}
    </Modal>
  );
}
