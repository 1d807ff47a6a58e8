import { createHash } from "node:crypto";
import pg from "pg";

/**
 * Devices straight into the registry's table, 5,000 rows a statement: tens of thousands of
 * REST registrations would only measure the test. `schema` is the registry's schema of the
 * stack (`stack.schemas["device-registry"]`).
 */
export async function seedRegistryDevices(
  databaseUrl: string,
  schema: string,
  appId: string,
  devices: { platform: string; token: string }[],
): Promise<void> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    for (let i = 0; i < devices.length; i += 5000) {
      const chunk = devices.slice(i, i + 5000);
      await client.query(
        `INSERT INTO "${schema}".devices (app_id, platform, push_token, token_hash, language)
         SELECT $1, p, t, h, 'en' FROM unnest($2::text[], $3::text[], $4::bytea[]) AS x(p, t, h)`,
        [
          appId,
          chunk.map((d) => d.platform),
          chunk.map((d) => d.token),
          chunk.map((d) => createHash("sha256").update(d.token, "utf8").digest()),
        ],
      );
    }
  } finally {
    await client.end();
  }
}
