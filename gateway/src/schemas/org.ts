import { errorResponses, ok, timestamp, uuid, component } from "./common.js";

const name = {
  type: "string",
  minLength: 1,
  maxLength: 200,
  description: "Display name.",
  examples: ["Acme"],
} as const;

export const orgSchema = component(
  "Org",
  { description: "The organization: owns apps, API keys, members and OAuth clients." },
  {
    id: uuid("Organization id."),
    name,
    created_at: timestamp("Creation time (UTC)."),
  },
);

const tags = ["Organization"];

export const getOrgSchema = {
  tags,
  operationId: "getOrg",
  summary: "Get the organization",
  description: "The organization of the session.",
  response: { 200: ok("The organization.", "Org"), ...errorResponses(403) },
};

export const updateOrgSchema = {
  tags,
  operationId: "updateOrg",
  summary: "Rename the organization",
  body: { type: "object", required: ["name"], additionalProperties: false, properties: { name } },
  response: { 200: ok("The updated organization.", "Org"), ...errorResponses(400, 403) },
};
