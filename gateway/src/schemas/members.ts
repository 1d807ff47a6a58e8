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

export const role = {
  type: "string",
  enum: ["owner", "admin", "developer", "viewer"],
  description:
    "owner: members, invitations and the organization, and all below; admin: apps, platform configs, API keys, " +
    "OAuth clients, and all below; developer: devices, segments, campaigns, sends and imports; viewer: read only.",
  examples: ["developer"],
} as const;

export const userSchema = component(
  "User",
  { description: "A person who can sign in." },
  {
    id: uuid("User id, used as {user_id} in member paths."),
    email: { type: "string", format: "email", description: "Sign-in email.", examples: ["ada@example.com"] },
    name: { type: ["string", "null"], description: "Display name, if given.", examples: ["Ada Lovelace"] },
  },
);

export const memberSchema = component(
  "Member",
  { description: "A user's membership of the organization." },
  {
    user: { $ref: "User#" },
    role,
    joined_at: timestamp("When the user joined (UTC)."),
  },
);

export const meSchema = component(
  "Me",
  { description: "The signed-in user, the organization the session acts in, and all of the user's organizations." },
  {
    user: { $ref: "User#" },
    org: {
      type: "object",
      required: ["id", "name"],
      additionalProperties: false,
      properties: { id: uuid("Organization of this session."), name: { type: "string", description: "Its name." } },
    },
    role: { ...role, description: "The user's role in that organization." },
    memberships: {
      type: "array",
      description: "Every organization the user belongs to.",
      items: {
        type: "object",
        required: ["org_id", "org_name", "role"],
        additionalProperties: false,
        properties: { org_id: uuid("Organization id."), org_name: { type: "string" }, role },
      },
    },
  },
);

const userParams = idParams("user_id", "User id of the member.");

export const getMeSchema = {
  tags: ["Organization"],
  operationId: "getMe",
  summary: "Who is signed in",
  description: "The session's user, organization and role.",
  response: { 200: ok("The signed-in user.", "Me"), ...errorResponses(403) },
};

const tags = ["Members"];

export const listMembersSchema = {
  tags,
  operationId: "listMembers",
  summary: "List the organization's members",
  querystring: pageQuerystring(),
  response: { 200: listOf("Member", "A page of members."), ...errorResponses(400, 403) },
};

export const updateMemberSchema = {
  tags,
  operationId: "updateMember",
  summary: "Change a member's role",
  description: "The organization's last owner cannot be given another role (409).",
  params: userParams,
  body: { type: "object", required: ["role"], additionalProperties: false, properties: { role } },
  response: { 200: ok("The member with the new role.", "Member"), ...errorResponses(400, 403, 404, 409) },
};

export const removeMemberSchema = {
  tags,
  operationId: "removeMember",
  summary: "Remove a member",
  description: "The user keeps their account and other memberships. The last owner cannot be removed (409).",
  params: userParams,
  response: { 204: noContent("Removed."), ...errorResponses(403, 404, 409) },
};
