import {
  errorResponses,
  idParams,
  listOf,
  noContent,
  ok,
  pageQuerystring,
  timestamp,
  uuid,
  component,
} from "./common.js";
import { role } from "./members.js";

const email = {
  type: "string",
  format: "email",
  maxLength: 254,
  description: "Who is invited; they sign in with this email once they accept.",
  examples: ["grace@example.com"],
} as const;

const invitationProperties = {
  id: uuid("Invitation id, used in DELETE /v1/invitations/{invitation_id}."),
  email,
  role: { ...role, description: "The role the invitee gets on accepting." },
  expires_at: timestamp("After this time the invitation can no longer be accepted (UTC)."),
  created_at: timestamp("Creation time (UTC)."),
} as const;

export const invitationSchema = component(
  "Invitation",
  { description: "A pending invitation, without its token." },
  invitationProperties,
);

export const createdInvitationSchema = component(
  "CreatedInvitation",
  { description: "A new invitation with its secret token and link: shown once, never again." },
  {
    ...invitationProperties,
    token: {
      type: "string",
      description: "The secret for POST /v1/invitations/accept. Send it to the invitee; it cannot be shown again.",
    },
    accept_url: {
      type: "string",
      format: "uri",
      description: "The page where the invitee accepts by choosing a password (the token is in the link).",
      examples: ["https://herald.example.com/invitations/accept?token=Xb0qYtKmRr3dV8aPq2WnLs1eXb0qYtKmRr3dV8aPq2W"],
    },
  },
);

export const acceptedInvitationSchema = component(
  "AcceptedInvitation",
  { description: "The user who accepted, and the membership they got." },
  {
    user: { $ref: "User#" },
    org_id: uuid("The organization joined."),
    role,
  },
);

const tags = ["Members"];

export const createInvitationSchema = {
  tags,
  operationId: "createInvitation",
  summary: "Invite someone",
  description:
    "Answers the invitation's token and accept link once. An email that is already a member answers 409. " +
    "Invitations expire after 7 days.",
  body: {
    type: "object",
    required: ["email", "role"],
    additionalProperties: false,
    properties: { email, role },
  },
  response: { 201: ok("The invitation with its token.", "CreatedInvitation"), ...errorResponses(400, 403, 409) },
};

export const listInvitationsSchema = {
  tags,
  operationId: "listInvitations",
  summary: "List pending invitations",
  description: "Tokens are never shown again.",
  querystring: pageQuerystring(),
  response: { 200: listOf("Invitation", "A page of invitations."), ...errorResponses(400, 403) },
};

export const revokeInvitationSchema = {
  tags,
  operationId: "revokeInvitation",
  summary: "Revoke an invitation",
  description: "Its token stops working at once.",
  params: idParams("invitation_id", "Invitation id."),
  response: { 204: noContent("Revoked."), ...errorResponses(403, 404) },
};

export const acceptInvitationSchema = {
  tags,
  operationId: "acceptInvitation",
  summary: "Accept an invitation",
  description:
    "No authentication: the token is the credential. A new user sets their password (and optionally a name); " +
    "a user who already has an account gives their current password (401 when wrong). An unknown, expired, " +
    "revoked or already used token answers 404. Counted against a per-address rate limit.",
  security: [],
  body: {
    type: "object",
    required: ["token", "password"],
    additionalProperties: false,
    properties: {
      token: { type: "string", minLength: 1, maxLength: 512, description: "The invitation's token." },
      password: {
        type: "string",
        minLength: 1,
        maxLength: 1024,
        description: "A new user's password (a policy applies: 400 when too weak), or an existing user's current one.",
      },
      name: { type: "string", minLength: 1, maxLength: 200, description: "A new user's display name." },
    },
  },
  response: { 200: ok("The membership.", "AcceptedInvitation"), ...errorResponses(400, 404) },
};
