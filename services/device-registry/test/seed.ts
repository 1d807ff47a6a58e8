import { tokenHash } from "../src/push-token.js";
import type { Registry } from "./harness.js";

export interface Seeded {
  id: string;
  platform: "ios" | "android" | "web";
  external_id: string | null;
  language: string;
  timezone: string;
  app_version: string;
  tags: string[];
  targetable: boolean;
}

const PLATFORMS = ["ios", "android", "web"] as const;
const LANGUAGES = ["en", "de", "fr", "pt"];
const TIMEZONES = ["Europe/Berlin", "America/New_York"];
const VERSIONS = ["1.0", "2.0", "3.0", "4.0", "5.0"];

/** Devices with varied attributes, inserted in one statement (not 10,000 RPCs). */
export async function seed(r: Registry, appId: string, count: number): Promise<Seeded[]> {
  const rows = Array.from({ length: count }, (_, i) => {
    const tags = [
      ...(i % 7 === 0 ? ["vip"] : []),
      ...(i % 3 === 0 ? ["beta"] : []),
      ...(i % 11 === 0 ? ["churned"] : []),
    ];
    return {
      token: `tok-${appId}-${i}`,
      platform: PLATFORMS[i % 3]!,
      external_id: i % 2 === 0 ? `user-${i % 500}` : null,
      language: LANGUAGES[i % 4]!,
      timezone: TIMEZONES[i % 2]!,
      app_version: VERSIONS[i % 5]!,
      tags,
      opted_in: i % 10 !== 3,
      invalid: i % 13 === 5,
    };
  });
  const { rows: inserted } = await r.pool.query<{ id: string; push_token: string }>(
    `INSERT INTO devices (app_id, push_token, token_hash, platform, external_id, language, timezone, app_version, tags, opted_in, invalid)
     SELECT $1, t.token, t.hash, t.platform, t.external_id, t.language, t.timezone, t.app_version,
            ARRAY(SELECT jsonb_array_elements_text(t.tags::jsonb)), t.opted_in, t.invalid
     FROM unnest($2::text[], $3::bytea[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[], $10::bool[], $11::bool[])
       AS t(token, hash, platform, external_id, language, timezone, app_version, tags, opted_in, invalid)
     RETURNING id, push_token`,
    [
      appId,
      rows.map((d) => d.token),
      rows.map((d) => tokenHash(d.token)),
      rows.map((d) => d.platform),
      rows.map((d) => d.external_id),
      rows.map((d) => d.language),
      rows.map((d) => d.timezone),
      rows.map((d) => d.app_version),
      rows.map((d) => JSON.stringify(d.tags)),
      rows.map((d) => d.opted_in),
      rows.map((d) => d.invalid),
    ],
  );
  const idByToken = new Map(inserted.map((row) => [row.push_token, row.id]));
  return rows.map((d) => ({ ...d, id: idByToken.get(d.token)!, targetable: d.opted_in && !d.invalid }));
}
