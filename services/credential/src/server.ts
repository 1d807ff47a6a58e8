import path from "node:path";
import { Gauge } from "prom-client";
import { jetstream } from "@nats-io/jetstream";
import { CredentialService } from "@herald/proto/credential";
import { IdentityService } from "@herald/proto/identity";
import {
  createMetricsRegistry,
  ensureStream,
  eventsStreamConfig,
  openServiceData,
  OutboxRelay,
  registerOutboxMetrics,
  startDataAdmin,
  startRpcServer,
  startWithClosers,
  type Logger,
  type Pool,
  packageDir,
} from "@herald/runtime";
import { bootstrap, bootstrapAdmin } from "./bootstrap.js";
import { checkBootstrapAdmin, checkBootstrapKey, configSpec, sealedBoxOf, type Config } from "./config.js";
import { CredentialServiceImpl } from "./credential-service.js";
import { IdentityCleanup } from "./identity-cleanup.js";
import { IdentityServiceImpl } from "./identity-service.js";
import { IdentityStore } from "./identity-store.js";
import { InvitationStore } from "./invitations.js";
import { OAuthClientStore } from "./oauth-clients.js";
import { OAuthModelStore } from "./oauth-models.js";
import { appDeletedKind } from "./app-deleted-event.js";
import { ReencryptionJob, SEALED_TABLES } from "./reencryption-job.js";
import type { SealedBox } from "@herald/runtime";
import { SigningKeyStore } from "./signing-keys.js";
import { PostgresCredentialStore } from "./credential-store.js";

export interface CredentialApp {
  port: number;
  adminPort: number;
  close(): Promise<void>;
}

const MIGRATIONS = path.join(packageDir("@herald/credential"), "migrations");
const IDENTITY_CLEANUP_INTERVAL_MS = 5 * 60_000;
/** Re-encryption after a master-key rotation: a pass at start, then every minute, 100 rows per transaction. */
const REENCRYPTION = { intervalMs: 60_000, batchSize: 100 };

/** Wires the credential service. Production, dev mode and tests all start it here. */
export async function start(config: Config, deps: { log: Logger }): Promise<CredentialApp> {
  const { log } = deps;
  checkBootstrapKey(config);
  checkBootstrapAdmin(config);
  const sealedBox = sealedBoxOf(config);
  log.info({ activeVersion: sealedBox.keyVersion, versions: sealedBox.versions }, "master keys configured");
  const signingKeyPolicy = {
    rotationDays: config.signingKeyRotationDays ?? configSpec.signingKeyRotationDays.default!,
    retentionHours: config.signingKeyRetentionHours ?? configSpec.signingKeyRetentionHours.default!,
  };
  return startWithClosers(log, async (closers) => {
    const data = await openServiceData(config, { name: "credential", migrations: MIGRATIONS, log }, closers);
    const { pool, nc, names } = data;
    const store = new PostgresCredentialStore(pool);
    const identity = new IdentityStore(pool);
    const orgId = await bootstrap(store, identity, config.bootstrapApiKey, log);
    if (config.bootstrapAdminEmail !== undefined && config.bootstrapAdminPassword !== undefined) {
      const admin = { email: config.bootstrapAdminEmail, password: config.bootstrapAdminPassword };
      await bootstrapAdmin(identity, orgId, admin, log);
    }

    await ensureStream(nc, eventsStreamConfig(names), log);
    const publisher = new OutboxRelay({
      pool,
      js: jetstream(nc),
      kinds: { "app.deleted": appDeletedKind(names) },
      log,
    });
    publisher.start();
    closers.add(() => publisher.stop());

    const reencryption = new ReencryptionJob(pool, sealedBox, REENCRYPTION, log);
    reencryption.start();
    closers.add(() => reencryption.stop());
    const cleanup = new IdentityCleanup(
      pool,
      { intervalMs: IDENTITY_CLEANUP_INTERVAL_MS, signingKeyRetentionHours: signingKeyPolicy.retentionHours },
      log,
    );
    cleanup.start();
    closers.add(() => cleanup.stop());

    const service = new CredentialServiceImpl({
      store,
      sealedBox,
      defaultRateLimits: {
        server: config.defaultRateLimit,
        client: config.clientKeyRateLimit ?? configSpec.clientKeyRateLimit.default!,
      },
      log,
      afterAppDeleted: () => void publisher.flush(),
    });
    const identityService = new IdentityServiceImpl({
      identity,
      invitations: new InvitationStore(pool),
      clients: new OAuthClientStore(pool),
      models: new OAuthModelStore(pool),
      signingKeys: new SigningKeyStore(pool, sealedBox, signingKeyPolicy, log),
    });
    const rpc = await startRpcServer({
      routes: (router) => router.service(CredentialService, service).service(IdentityService, identityService),
      port: config.port,
      log,
    });
    closers.add(() => rpc.close());
    const admin = await startDataAdmin(
      config.adminPort,
      credentialRegistry(pool, sealedBox, reencryption),
      data,
      closers,
    );
    return { port: rpc.port, adminPort: admin.port };
  });
}

/**
 * Default process metrics plus the outbox's (registerOutboxMetrics); and the sealed rows
 * per master-key version, which shows a rotation's progress.
 */
function credentialRegistry(pool: Pool, sealedBox: SealedBox, reencryption: ReencryptionJob) {
  const registry = createMetricsRegistry("credential");
  registerOutboxMetrics(registry, pool);
  new Gauge({
    name: "herald_credential_sealed_rows",
    help: "Rows holding sealed private material, by table and master-key version (0 for a configured version no row uses)",
    labelNames: ["table", "key_version"],
    registers: [registry],
    async collect() {
      const { rows } = await pool.query<{ tbl: string; version: number; n: string }>(
        `SELECT 'platform_configs' AS tbl, key_version AS version, count(*) AS n FROM platform_configs GROUP BY 2
         UNION ALL SELECT 'signing_keys', key_version, count(*) FROM signing_keys GROUP BY 2`,
      );
      this.reset();
      for (const { name } of SEALED_TABLES) {
        for (const version of sealedBox.versions) this.set({ table: name, key_version: String(version) }, 0);
      }
      for (const r of rows) this.set({ table: r.tbl, key_version: String(r.version) }, Number(r.n));
    },
  });
  new Gauge({
    name: "herald_credential_unreadable_sealed_rows",
    help: "Sealed rows of an older or unknown master-key version that no configured key opened in the last re-encryption pass",
    labelNames: ["table"],
    registers: [registry],
    collect() {
      for (const [table, n] of Object.entries(reencryption.unreadableRows())) this.set({ table }, n);
    },
  });
  return registry;
}
