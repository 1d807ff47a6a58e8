import type { Schemas } from "@herald/client";

type AndroidChannel = Schemas["AndroidChannel"];
/** Android's NotificationManager importance levels, as the API names them. */
export type ChannelImportance = AndroidChannel["importance"];
/** What POST and PATCH /v1/apps/{app_id}/android-channels take besides the id. */
export type AndroidChannelSettings = Omit<AndroidChannel, "id" | "app_id" | "created_at" | "updated_at">;

/**
 * The channel form's values and their mapping to the body of
 * POST/PATCH /v1/apps/{app_id}/android-channels (gateway/src/schemas/android-channels.ts);
 * the limits repeat the API's so mistakes show beside their field before a request.
 */
export interface ChannelValues {
  id: string;
  name: string;
  description: string;
  importance: ChannelImportance;
  sound: string;
  vibration: boolean;
  /** Milliseconds separated by commas or spaces; empty: the device's default pattern. */
  pattern: string;
  lights: boolean;
  /** #RRGGBB; empty: the device's default color. */
  color: string;
  badge: boolean;
  group: string;
}

export const CHANNEL_ID = /^[A-Za-z0-9_.-]{1,64}$/;
const SOUND = /^[A-Za-z0-9_.-]{1,64}$/;
const COLOR = /^#[0-9A-Fa-f]{6}$/;
export const NAME_MAX = 255;
export const DESCRIPTION_MAX = 1000;
const PATTERN_STEPS = 64;
const STEP_MS = 60_000;

export const IMPORTANCE_OPTIONS: { value: ChannelImportance; label: string }[] = [
  { value: "min", label: "Min — silent, not in the status bar" },
  { value: "low", label: "Low — silent" },
  { value: "default", label: "Default — makes a sound" },
  { value: "high", label: "High — sound and heads-up" },
  { value: "max", label: "Max — sound and heads-up, most urgent" },
];

export const IMPORTANCE_LABELS: Record<ChannelImportance, string> = {
  min: "Min",
  low: "Low",
  default: "Default",
  high: "High",
  max: "Max",
};

/** The API's defaults for what a create leaves out. */
export const NEW_CHANNEL: ChannelValues = {
  id: "",
  name: "",
  description: "",
  importance: "default",
  sound: "",
  vibration: false,
  pattern: "",
  lights: false,
  color: "",
  badge: true,
  group: "",
};

export function valuesOf(c: AndroidChannel): ChannelValues {
  return {
    id: c.id,
    name: c.name,
    description: c.description,
    importance: c.importance,
    sound: c.sound ?? "",
    vibration: c.vibration !== false,
    pattern: Array.isArray(c.vibration) ? c.vibration.join(", ") : "",
    lights: c.lights !== false,
    color: typeof c.lights === "string" ? c.lights : "",
    badge: c.badge,
    group: c.group ?? "",
  };
}

/** The steps of a pattern, or undefined when one is not a whole number of milliseconds in range. */
export function parsePattern(text: string): number[] | undefined {
  const steps = text.split(/[\s,]+/).filter(Boolean);
  if (!steps.every((s) => /^\d{1,5}$/.test(s))) return undefined;
  const ms = steps.map(Number);
  return ms.length <= PATTERN_STEPS && ms.every((n) => n <= STEP_MS) ? ms : undefined;
}

/** Field → message, in the shape @mantine/form's `validate` takes. */
export const channelRules = {
  id: (v: string) => (CHANNEL_ID.test(v.trim()) ? null : "1 to 64 characters: letters, digits, _ . or -"),
  name: (v: string) =>
    v.trim() && v.trim().length <= NAME_MAX ? null : `Give the channel a name (at most ${NAME_MAX})`,
  description: (v: string) => (v.length <= DESCRIPTION_MAX ? null : `At most ${DESCRIPTION_MAX} characters`),
  sound: (v: string) =>
    !v.trim() || SOUND.test(v.trim()) ? null : "A sound resource name: letters, digits, _ . or -, no extension",
  pattern: (v: string, values: ChannelValues) =>
    !values.vibration || parsePattern(v) ? null : `Up to ${PATTERN_STEPS} durations of 0 to ${STEP_MS} ms`,
  color: (v: string, values: ChannelValues) => (!values.lights || !v || COLOR.test(v) ? null : "A color as #RRGGBB"),
  group: (v: string) =>
    !v.trim() || CHANNEL_ID.test(v.trim()) ? null : "1 to 64 characters: letters, digits, _ . or -",
};

export function settingsOf(v: ChannelValues): AndroidChannelSettings {
  const pattern = parsePattern(v.pattern) ?? [];
  return {
    name: v.name.trim(),
    description: v.description.trim(),
    importance: v.importance,
    sound: v.sound.trim() || null,
    vibration: v.vibration && pattern.length > 0 ? pattern : v.vibration,
    lights: v.lights && v.color ? v.color : v.lights,
    badge: v.badge,
    group: v.group.trim() || null,
  };
}

/** Only what differs from the stored channel: a PATCH then changes nothing else. */
export function changedSettings(
  current: AndroidChannel,
  next: AndroidChannelSettings,
): Partial<AndroidChannelSettings> {
  const changed: Partial<AndroidChannelSettings> = {};
  for (const key of Object.keys(next) as (keyof AndroidChannelSettings)[]) {
    if (JSON.stringify(next[key]) !== JSON.stringify(current[key])) Object.assign(changed, { [key]: next[key] });
  }
  return changed;
}

export function describeVibration(v: AndroidChannel["vibration"]): string {
  if (Array.isArray(v)) return `${v.join(", ")} ms`;
  return v ? "On" : "Off";
}
