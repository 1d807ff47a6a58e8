import { Code, ConnectError } from "@connectrpc/connect";
import type { IdentityClient } from "../backends.js";
import { CONSOLE_CLIENT_ID } from "./provider.js";

export type OrgChoice = { ok: true; orgId: string; orgName: string } | { ok: false; message: string };

const notFound = (err: unknown) =>
  err instanceof ConnectError && (err.code === Code.NotFound || err.code === Code.InvalidArgument);

/**
 * The organization a sign-in acts in. A client an organization registered works only for
 * that organization's members; the console works for any membership: the `org_id`
 * authorization parameter when given, else the user's first membership.
 */
export async function chooseOrg(
  identity: IdentityClient,
  userId: string,
  clientId: string,
  requestedOrg: unknown,
): Promise<OrgChoice> {
  const { memberships } = await identity.getUser({ userId });
  if (memberships.length === 0)
    return { ok: false, message: "This account is not a member of any organization. Ask an owner to invite you." };

  let wanted = typeof requestedOrg === "string" && requestedOrg ? requestedOrg.toLowerCase() : undefined;
  if (clientId !== CONSOLE_CLIENT_ID) {
    let clientOrg: string | undefined;
    try {
      clientOrg = (await identity.getOAuthClient({ clientId })).client?.orgId;
    } catch (err) {
      if (!notFound(err)) throw err;
    }
    if (!clientOrg) return { ok: false, message: "This application is no longer registered." };
    if (wanted && wanted !== clientOrg)
      return { ok: false, message: "This application belongs to another organization." };
    wanted = clientOrg;
  }

  const membership = wanted ? memberships.find((m) => m.orgId === wanted) : memberships[0];
  if (!membership)
    return {
      ok: false,
      message:
        clientId === CONSOLE_CLIENT_ID
          ? "You are not a member of the requested organization."
          : "This application belongs to an organization you are not a member of.",
    };
  return { ok: true, orgId: membership.orgId, orgName: membership.orgName };
}
