import type { Schemas } from "@herald/client";

export type Platform = Schemas["App"]["platform"];

export const PLATFORM_LABELS: Record<Platform, string> = { ios: "iOS", android: "Android", web: "Web" };
export const PLATFORM_OPTIONS = (Object.keys(PLATFORM_LABELS) as Platform[]).map((value) => ({
  value,
  label: PLATFORM_LABELS[value],
}));
