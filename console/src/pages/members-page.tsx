import { Button, Select, Title } from "@mantine/core";
import { useState } from "react";
import { herald } from "../api/herald";
import { useApi } from "../api/use-api";
import { useSession } from "../auth/session-context";
import { ConfirmButton } from "../components/confirm";
import { ApiList } from "../components/api-list";
import { DataTable } from "../components/data-table";
import { attempt } from "../components/feedback";
import { formatTime, PageHeader } from "../components/page-header";
import { canManageMembers, ROLES, type Role } from "../roles";
import { InviteModal } from "./invite-modal";

export function MembersPage() {
  const { me } = useSession();
  const manage = canManageMembers(me.role);
  const members = useApi("/v1/members", { params: { query: { per_page: 200 } } });
  const invitations = useApi("/v1/invitations", manage ? { params: { query: { per_page: 200 } } } : null);
  const [inviting, setInviting] = useState(false);

  return (
    <>
      <PageHeader title="Members">
        {manage && <Button onClick={() => setInviting(true)}>Invite member</Button>}
      </PageHeader>
      <ApiList list={members} empty="No members.">
        {(rows) => (
          <DataTable
            label="Members"
            minWidth={600}
            rows={rows}
            rowKey={(m) => m.user.id}
            columns={[
              { header: "Email", cell: (m) => `${m.user.email}${m.user.id === me.user.id ? " (you)" : ""}` },
              { header: "Name", cell: (m) => m.user.name ?? "—" },
              {
                header: "Role",
                cell: (m) =>
                  manage && m.user.id !== me.user.id ? (
                    <Select
                      aria-label={`Role of ${m.user.email}`}
                      size="xs"
                      w={140}
                      data={ROLES}
                      value={m.role}
                      allowDeselect={false}
                      onChange={(role) =>
                        role &&
                        void attempt(
                          () =>
                            herald.PATCH("/v1/members/{user_id}", {
                              params: { path: { user_id: m.user.id } },
                              body: { role: role as Role },
                            }),
                          `${m.user.email} is now ${role}`,
                        ).then(members.reload)
                      }
                    />
                  ) : (
                    m.role
                  ),
              },
              { header: "Joined", cell: (m) => formatTime(m.joined_at) },
              {
                header: "Actions",
                hidden: true,
                cell: (m) =>
                  manage &&
                  m.user.id !== me.user.id && (
                    <ConfirmButton
                      label="Remove"
                      ariaLabel={`Remove ${m.user.email}`}
                      title={`Remove ${m.user.email}?`}
                      confirmLabel="Remove member"
                      call={() =>
                        herald.DELETE("/v1/members/{user_id}", {
                          params: { path: { user_id: m.user.id } },
                        })
                      }
                      success={`${m.user.email} removed`}
                      onDone={members.reload}
                    >
                      They lose access to this organization at once.
                    </ConfirmButton>
                  ),
              },
            ]}
          />
        )}
      </ApiList>
      {manage && (
        <>
          <Title order={3} mt="xl" mb="sm">
            Pending invitations
          </Title>
          <ApiList list={invitations} empty="No pending invitations.">
            {(rows) => (
              <DataTable
                label="Pending invitations"
                minWidth={600}
                rows={rows}
                rowKey={(inv) => inv.id}
                columns={[
                  { header: "Email", cell: (inv) => inv.email },
                  { header: "Role", cell: (inv) => inv.role },
                  { header: "Expires", cell: (inv) => formatTime(inv.expires_at) },
                  {
                    header: "Actions",
                    hidden: true,
                    cell: (inv) => (
                      <ConfirmButton
                        label="Revoke"
                        ariaLabel={`Revoke the invitation of ${inv.email}`}
                        title={`Revoke the invitation of ${inv.email}?`}
                        confirmLabel="Revoke invitation"
                        call={() =>
                          herald.DELETE("/v1/invitations/{invitation_id}", {
                            params: { path: { invitation_id: inv.id } },
                          })
                        }
                        success={"Invitation revoked"}
                        onDone={invitations.reload}
                      >
                        The link stops working.
                      </ConfirmButton>
                    ),
                  },
                ]}
              />
            )}
          </ApiList>
        </>
      )}
      {inviting && (
        <InviteModal
          onClose={() => {
            setInviting(false);
            invitations.reload();
          }}
        />
      )}
    </>
  );
}
