import { Button, Select, Table, Text, Title } from "@mantine/core";
import { useState } from "react";
import { herald } from "../api/herald";
import { useApi } from "../api/use-api";
import { useSession } from "../auth/session-context";
import { ConfirmButton } from "../components/confirm";
import { attempt, ErrorAlert, Loading } from "../components/feedback";
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
      <ErrorAlert error={members.error} />
      {!members.data ? (
        <Loading />
      ) : (
        <Table.ScrollContainer minWidth={600}>
          <Table striped verticalSpacing="sm" aria-label="Members">
            <Table.Thead>
              <Table.Tr>
                <Table.Th>Email</Table.Th>
                <Table.Th>Name</Table.Th>
                <Table.Th>Role</Table.Th>
                <Table.Th>Joined</Table.Th>
                <Table.Th aria-label="Actions" />
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {members.data.data.map((m) => {
                const self = m.user.id === me.user.id;
                return (
                  <Table.Tr key={m.user.id}>
                    <Table.Td>
                      {m.user.email}
                      {self ? " (you)" : ""}
                    </Table.Td>
                    <Table.Td>{m.user.name ?? "—"}</Table.Td>
                    <Table.Td>
                      {manage && !self ? (
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
                      )}
                    </Table.Td>
                    <Table.Td>{formatTime(m.joined_at)}</Table.Td>
                    <Table.Td>
                      {manage && !self && (
                        <ConfirmButton
                          label="Remove"
                          ariaLabel={`Remove ${m.user.email}`}
                          title={`Remove ${m.user.email}?`}
                          confirmLabel="Remove member"
                          onConfirm={() =>
                            attempt(
                              () =>
                                herald.DELETE("/v1/members/{user_id}", {
                                  params: { path: { user_id: m.user.id } },
                                }),
                              `${m.user.email} removed`,
                            ).then(members.reload)
                          }
                        >
                          They lose access to this organization at once.
                        </ConfirmButton>
                      )}
                    </Table.Td>
                  </Table.Tr>
                );
              })}
            </Table.Tbody>
          </Table>
        </Table.ScrollContainer>
      )}
      {manage && (
        <>
          <Title order={3} mt="xl" mb="sm">
            Pending invitations
          </Title>
          <ErrorAlert error={invitations.error} />
          {!invitations.data ? (
            <Loading />
          ) : invitations.data.data.length === 0 ? (
            <Text>No pending invitations.</Text>
          ) : (
            <Table.ScrollContainer minWidth={600}>
              <Table striped verticalSpacing="sm" aria-label="Pending invitations">
                <Table.Thead>
                  <Table.Tr>
                    <Table.Th>Email</Table.Th>
                    <Table.Th>Role</Table.Th>
                    <Table.Th>Expires</Table.Th>
                    <Table.Th aria-label="Actions" />
                  </Table.Tr>
                </Table.Thead>
                <Table.Tbody>
                  {invitations.data.data.map((inv) => (
                    <Table.Tr key={inv.id}>
                      <Table.Td>{inv.email}</Table.Td>
                      <Table.Td>{inv.role}</Table.Td>
                      <Table.Td>{formatTime(inv.expires_at)}</Table.Td>
                      <Table.Td>
                        <ConfirmButton
                          label="Revoke"
                          ariaLabel={`Revoke the invitation of ${inv.email}`}
                          title={`Revoke the invitation of ${inv.email}?`}
                          confirmLabel="Revoke invitation"
                          onConfirm={() =>
                            attempt(
                              () =>
                                herald.DELETE("/v1/invitations/{invitation_id}", {
                                  params: { path: { invitation_id: inv.id } },
                                }),
                              "Invitation revoked",
                            ).then(invitations.reload)
                          }
                        >
                          The link stops working.
                        </ConfirmButton>
                      </Table.Td>
                    </Table.Tr>
                  ))}
                </Table.Tbody>
              </Table>
            </Table.ScrollContainer>
          )}
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
