/**
 * Creates the database a PostgreSQL URL names when it does not exist yet (dev mode and the
 * tests' global set-up), through the server's maintenance database. A database created
 * concurrently by another process is no error.
 */
export async function ensureDatabase(url) {
  // Imported here: dev mode loads this module before it has installed the dependencies.
  const { default: pg } = await import("pg");
  const name = new URL(url).pathname.slice(1);
  const admin = new URL(url);
  admin.pathname = "/postgres";
  const client = new pg.Client({ connectionString: admin.toString() });
  await client.connect();
  try {
    const { rowCount } = await client.query("SELECT 1 FROM pg_database WHERE datname = $1", [name]);
    if (!rowCount)
      await client.query(`CREATE DATABASE "${name.replace(/"/g, "")}"`).catch((err) => {
        if (err.code !== "42P04") throw err; // created concurrently
      });
  } finally {
    await client.end();
  }
}
