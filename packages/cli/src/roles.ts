/**
 * Every role the `herald` command can start, each a module (roles/) loaded only when
 * chosen, so that a process holds the code of its own role alone.
 */
export const ROLES = {
  gateway: () => import("./roles/gateway.js"),
  credential: () => import("./roles/credential.js"),
  "device-registry": () => import("./roles/device-registry.js"),
  campaign: () => import("./roles/campaign.js"),
  "sender-apns": () => import("./roles/sender-apns.js"),
  "sender-fcm": () => import("./roles/sender-fcm.js"),
  "sender-webpush": () => import("./roles/sender-webpush.js"),
  webhooks: () => import("./roles/webhooks.js"),
} satisfies Record<string, () => Promise<{ start(opts: { onStop: () => Promise<void> }): Promise<void> }>>;

export type RoleName = keyof typeof ROLES;

export const ROLE_NAMES = Object.keys(ROLES) as RoleName[];

export function isRoleName(name: string): name is RoleName {
  return Object.hasOwn(ROLES, name);
}
