import { randomUUID } from "node:crypto";
import { expect } from "vitest";
import type { Role } from "../src/principal.js";
import type { TestGateway } from "./harness.js";
import { newPassword, type Member, type SessionTokens } from "./session-tokens.js";

/** A new user who joined the owner's organization with the role, through REST: invite, then accept. */
export async function join(
  gw: TestGateway,
  tokens: SessionTokens,
  owner: { token: string; orgId: string },
  role: Role,
): Promise<Member> {
  const email = `${role}-${randomUUID().slice(0, 8)}@example.com`;
  const password = newPassword();
  const invitation = await gw.call("POST", "/v1/invitations", owner.token, { email, role });
  expect(invitation.status, invitation.text).toBe(201);
  const accepted = await gw.call("POST", "/v1/invitations/accept", undefined, {
    token: invitation.body.token,
    password,
  });
  expect(accepted.status, accepted.text).toBe(200);
  const userId = accepted.body.user.id as string;
  return { userId, email, password, role, token: await tokens.mint({ userId, orgId: owner.orgId, role }) };
}
