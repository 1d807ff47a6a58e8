import { createHash } from "node:crypto";
import pg from "pg";

const ROWS_PER_STATEMENT = 5000;

/**
 * Devices straight into the registry's table, 5,000 rows a statement: tens of thousands of
 * REST registrations would only measure the test (the benchmarks seed a million this way:
 * `devices` is read lazily, one statement's rows at a time). `schema` is the registry's
 * schema of the stack (`stack.schemas["device-registry"]`; `device_registry` for the built
 * processes).
 */
export async function seedRegistryDevices(
  databaseUrl: string,
  schema: string,
  appId: string,
  devices: Iterable<{ platform: string; token: string }>,
): Promise<void> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  const insert = (chunk: { platform: string; token: string }[]) =>
    client.query(
      `INSERT INTO "${schema}".devices (app_id, platform, push_token, token_hash, language)
       SELECT $1, p, t, h, 'en' FROM unnest($2::text[], $3::text[], $4::bytea[]) AS x(p, t, h)`,
      [
        appId,
        chunk.map((d) => d.platform),
        chunk.map((d) => d.token),
        chunk.map((d) => createHash("sha256").update(d.token, "utf8").digest()),
      ],
    );
  try {
    let chunk: { platform: string; token: string }[] = [];
    for (const device of devices) {
      chunk.push(device);
      if (chunk.length === ROWS_PER_STATEMENT) {
        await insert(chunk);
        chunk = [];
      }
    }
    if (chunk.length > 0) await insert(chunk);
  } finally {
    await client.end();
  }
}
