import { fileURLToPath } from "node:url";
import { jetstream } from "@nats-io/jetstream";
import { CredentialService } from "@herald/proto/credential";
import {
  allReady,
  connectNats,
  createMetricsRegistry,
  createPool,
  ensureStream,
  eventsStreamConfig,
  migrate,
  natsReady,
  postgresReady,
  startAdminServer,
  startRpcServer,
  streamNames,
  type Logger,
} from "@herald/runtime";
import { bootstrap } from "./bootstrap.js";
import { checkBootstrapKey, type Config } from "./config.js";
import { CredentialServiceImpl } from "./credential-service.js";
import { OutboxPublisher } from "./outbox-publisher.js";
import { SealedBox } from "./sealed-box.js";
import { PostgresCredentialStore } from "./store.js";

export interface CredentialApp {
  port: number;
  adminPort: number;
  close(): Promise<void>;
}

const MIGRATIONS = fileURLToPath(new URL("../migrations", import.meta.url));

/** Wires the credential service. Production, dev mode and tests all start it here. */
export async function start(config: Config, deps: { log: Logger }): Promise<CredentialApp> {
  const { log } = deps;
  checkBootstrapKey(config);
  // Closers of what is up so far, run in reverse if a later step fails.
  const opened: (() => Promise<void>)[] = [];
  try {
    const pool = createPool({ url: config.databaseUrl, schema: config.schema });
    opened.push(() => pool.end());
    await migrate(pool, config.schema, MIGRATIONS, log);
    const store = new PostgresCredentialStore(pool);
    await bootstrap(store, config.bootstrapApiKey, log);

    const nc = await connectNats(config.natsUrl, "credential", log);
    opened.push(() => nc.drain());
    const names = streamNames(config.natsNamespace);
    await ensureStream(nc, eventsStreamConfig(names));
    const publisher = new OutboxPublisher(pool, jetstream(nc), names, log);
    publisher.start();
    opened.push(() => publisher.stop());

    const service = new CredentialServiceImpl({
      store,
      sealedBox: new SealedBox(config.masterKey),
      defaultRateLimit: config.defaultRateLimit,
      log,
      afterAppDeleted: () => void publisher.flush(),
    });
    const rpc = await startRpcServer({
      routes: (router) => router.service(CredentialService, service),
      port: config.port,
      log,
    });
    opened.push(() => rpc.close());
    const admin = await startAdminServer({
      port: config.adminPort,
      registry: createMetricsRegistry("credential"),
      ready: allReady(postgresReady(pool), natsReady(nc)),
    });

    return {
      port: rpc.port,
      adminPort: admin.port,
      close: async () => {
        await publisher.stop();
        await rpc.close();
        await admin.close();
        await nc.drain();
        await pool.end();
      },
    };
  } catch (err) {
    for (const close of opened.reverse()) await close().catch(() => undefined);
    throw err;
  }
}
