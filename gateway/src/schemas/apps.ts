import {
  appParams,
  errorResponses,
  listOf,
  noContent,
  ok,
  pageQuerystring,
  platform,
  timestamp,
  uuid,
  component,
} from "./common.js";

const name = {
  type: "string",
  minLength: 1,
  maxLength: 200,
  description: "Display name.",
  examples: ["Acme iOS"],
} as const;
const bundleId = {
  type: "string",
  minLength: 1,
  maxLength: 255,
  pattern: "^[A-Za-z0-9][A-Za-z0-9._-]{0,254}$",
  description: "Bundle id (iOS), package name (Android) or any stable identifier (web); unique per organization.",
  examples: ["com.acme.app"],
} as const;
const appPlatform = { ...platform, description: "Primary platform; an app may hold devices and configs of all three." };

export const appSchema = component(
  "App",
  { description: "An app: holds devices, platform configs and API keys." },
  {
    id: uuid("App id, used as {app_id} in paths."),
    org_id: uuid("Owning organization."),
    name,
    platform: appPlatform,
    bundle_id: bundleId,
    created_at: timestamp("Creation time (UTC)."),
    updated_at: timestamp("Last change (UTC)."),
  },
);

const tags = ["Apps"];

export const createAppSchema = {
  tags,
  operationId: "createApp",
  summary: "Create an app",
  description: "Needs an organization-scoped key or session.",
  body: {
    type: "object",
    required: ["name", "platform", "bundle_id"],
    additionalProperties: false,
    properties: { name, platform: appPlatform, bundle_id: bundleId },
  },
  response: { 201: ok("The created app.", "App"), ...errorResponses(400, 403, 409) },
};

export const listAppsSchema = {
  tags,
  operationId: "listApps",
  summary: "List apps",
  description: "Apps of the caller's organization; an app-scoped key sees only its own app.",
  querystring: pageQuerystring(),
  response: { 200: listOf("App", "A page of apps."), ...errorResponses(400) },
};

export const getAppSchema = {
  tags,
  operationId: "getApp",
  summary: "Get an app",
  params: appParams,
  response: { 200: ok("The app.", "App"), ...errorResponses(403, 404) },
};

export const updateAppSchema = {
  tags,
  operationId: "updateApp",
  summary: "Update an app",
  description: "Changes the given fields; at least one is required.",
  params: appParams,
  body: {
    type: "object",
    minProperties: 1,
    additionalProperties: false,
    properties: { name, platform: appPlatform, bundle_id: bundleId },
  },
  response: { 200: ok("The updated app.", "App"), ...errorResponses(400, 403, 404, 409) },
};

export const deleteAppSchema = {
  tags,
  operationId: "deleteApp",
  summary: "Delete an app",
  description:
    "Deletes the app with its devices, platform configs and API keys. Needs an organization-scoped key or session.",
  params: appParams,
  response: { 204: noContent("Deleted."), ...errorResponses(403, 404) },
};
