import { createHash, randomUUID } from "node:crypto";
import Fastify from "fastify";
import pg from "pg";

// The bare limit of device registration on this machine: fastify and one pg upsert into
// the registry's own table, nothing else (no auth, no rate limit, no RPC hop, no
// validation beyond the shape). The ingest benchmark runs Herald and this side by side.
// POST /floor answers the same request without the database: what HTTP alone costs, the
// ceiling of any registration endpoint under the same load generator on this machine.
//   BARE_PORT, DATABASE_URL (the bench database, device_registry schema)
const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 10 });
const app = Fastify();

app.post<{ Body: { app_id: string; push_token: string; platform: string; language?: string } }>(
  "/register",
  async (request) => {
    const b = request.body;
    const { rows } = await pool.query(
      `INSERT INTO device_registry.devices (app_id, token_hash, push_token, platform, language)
       VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT (app_id, token_hash) DO UPDATE SET push_token = EXCLUDED.push_token, updated_at = now()
       RETURNING id, (xmax = 0) AS created`,
      [b.app_id, createHash("sha256").update(b.push_token).digest(), b.push_token, b.platform, b.language ?? null],
    );
    return rows[0];
  },
);

app.post("/floor", async () => ({ id: randomUUID(), created: true }));

await app.listen({ port: Number(process.env.BARE_PORT), host: "127.0.0.1" });
process.on(
  "SIGTERM",
  () =>
    void app
      .close()
      .then(() => pool.end())
      .then(() => process.exit(0)),
);
