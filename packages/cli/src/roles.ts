import type { ServiceRole } from "@herald/runtime";

/**
 * Every role the `herald` command can start. Each is loaded only when chosen, so a
 * process holds the code of its own role alone.
 */
export const ROLES = {
  gateway: () => import("@herald/gateway/role"),
  credential: () => import("@herald/credential/role"),
  "device-registry": () => import("@herald/device-registry/role"),
  campaign: () => import("@herald/campaign/role"),
  "sender-apns": () => import("@herald/sender-apns/role"),
  "sender-fcm": () => import("@herald/sender-fcm/role"),
  "sender-webpush": () => import("@herald/sender-webpush/role"),
} satisfies Record<string, () => Promise<{ role: ServiceRole<{ logLevel: string }> }>>;

export type RoleName = keyof typeof ROLES;

export const ROLE_NAMES = Object.keys(ROLES) as RoleName[];

export function isRoleName(name: string): name is RoleName {
  return Object.hasOwn(ROLES, name);
}
