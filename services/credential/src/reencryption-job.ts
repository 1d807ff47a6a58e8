import { inTransaction, type Logger, type Pool, type PoolClient } from "@herald/runtime";
import { platformConfigSealContext } from "./credential-service.js";
import { SealedBoxError, type SealedBox } from "@herald/runtime";
import { signingKeySealContext } from "./signing-keys.js";

/** A table with a sealed blob and the master-key version beside it. */
export interface SealedTable {
  name: "platform_configs" | "signing_keys";
  /** The primary key's columns and their types, in index order (the pass walks it). */
  key: readonly { column: string; type: string }[];
  /** The associated data the row's blob was sealed with. */
  context(row: Record<string, string>): string;
}

/** Everything Herald seals: provider credentials and the OAuth signing keys. */
export const SEALED_TABLES: readonly SealedTable[] = [
  {
    name: "platform_configs",
    key: [
      { column: "app_id", type: "uuid" },
      { column: "platform", type: "text" },
    ],
    context: (row) => platformConfigSealContext(row.app_id!, row.platform!),
  },
  {
    name: "signing_keys",
    key: [{ column: "kid", type: "text" }],
    context: (row) => signingKeySealContext(row.kid!),
  },
];

export type TableName = SealedTable["name"];

/** What one pass did, per table. */
export interface PassResult {
  moved: Record<TableName, number>;
  /** Rows of an older or unknown version that no configured key opens, by table and version. */
  unreadable: Record<TableName, Record<number, number>>;
}

export interface ReencryptionOptions {
  /** Pause between passes; old blobs can appear while replicas with the old key still run. */
  intervalMs: number;
  /** Rows per transaction: the locks of one batch are held only while it is re-sealed. */
  batchSize: number;
}

interface Row {
  sealed: Buffer;
  keyVersion: number;
  [column: string]: unknown;
}

const emptyResult = (): PassResult => ({
  moved: { platform_configs: 0, signing_keys: 0 },
  unreadable: { platform_configs: {}, signing_keys: {} },
});

/**
 * Moves sealed blobs of older master-key versions to the active key after a rotation.
 * Each batch locks its rows with `FOR UPDATE SKIP LOCKED`, so any number of replicas
 * share the work (a row another replica holds is its business) and a concurrent write to
 * a row waits for the batch. A pass walks each table once by primary key, so rows no
 * configured key opens (a retired key removed too early, a wrong key) are counted and
 * left alone, not retried forever; passes repeat on an interval. Logs carry counts and
 * versions only.
 *
 * Only lower versions move. A configured higher version is a key being staged (every
 * replica learns it before any seals with it, docs/operations.md) or the key a rollback
 * left behind: its rows open and stay, so replicas on old and new settings never move
 * rows back and forth during a rollout.
 */
export class ReencryptionJob {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<PassResult | undefined> | undefined;
  private stopping = false;
  private last: PassResult | undefined;
  private lastWarning = "";

  constructor(
    private readonly pool: Pool,
    private readonly sealedBox: SealedBox,
    private readonly opts: ReencryptionOptions,
    private readonly log: Logger,
    private readonly tables: readonly SealedTable[] = SEALED_TABLES,
  ) {}

  /** Runs a pass now and then every intervalMs. */
  start(): void {
    this.stopping = false;
    void this.runOnce();
    this.timer = setInterval(() => void this.runOnce(), this.opts.intervalMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    this.stopping = true;
    clearInterval(this.timer);
    this.timer = undefined;
    await this.running;
  }

  /** Rows the last completed pass could not open, per table (0 before the first pass). */
  unreadableRows(): Record<TableName, number> {
    const sum = (byVersion: Record<number, number> | undefined) =>
      Object.values(byVersion ?? {}).reduce((a, b) => a + b, 0);
    return {
      platform_configs: sum(this.last?.unreadable.platform_configs),
      signing_keys: sum(this.last?.unreadable.signing_keys),
    };
  }

  /** One pass; a pass already under way is joined instead of started twice. Never throws. */
  runOnce(): Promise<PassResult | undefined> {
    this.running ??= this.pass()
      .then((result) => {
        this.report(result);
        return result;
      })
      .catch((err: unknown) => {
        this.log.warn({ err }, "master key re-encryption failed; retrying on the next run");
        return undefined;
      })
      .finally(() => (this.running = undefined));
    return this.running;
  }

  private async pass(): Promise<PassResult> {
    const result = emptyResult();
    for (const table of this.tables) {
      let after: unknown[] | undefined;
      while (!this.stopping) {
        const batch = await inTransaction(this.pool, (client) => this.batch(client, table, after, result));
        if (batch.last) after = batch.last;
        if (batch.rows < this.opts.batchSize) break;
      }
    }
    return result;
  }

  /** Locks, re-seals and updates one batch of rows of an older (or unknown) version. */
  private async batch(
    client: PoolClient,
    table: SealedTable,
    after: unknown[] | undefined,
    result: PassResult,
  ): Promise<{ rows: number; last?: unknown[] }> {
    const active = this.sealedBox.keyVersion;
    // Configured versions above the active one stay where they are (see the class comment).
    const staged = this.sealedBox.versions.filter((v) => v > active);
    const columns = table.key.map((k) => k.column);
    const cursor = after
      ? `AND (${columns.join(", ")}) > (${table.key.map((k, i) => `$${i + 4}::${k.type}`).join(", ")})`
      : "";
    const { rows } = await client.query<Row>(
      // node-postgres returns uuid and text columns as strings, which is what contexts take.
      `SELECT ${columns.join(", ")}, sealed, key_version AS "keyVersion"
       FROM ${table.name} WHERE key_version <> $1 AND key_version <> ALL($3::int[]) ${cursor}
       ORDER BY ${columns.join(", ")} LIMIT $2 FOR UPDATE SKIP LOCKED`,
      [active, this.opts.batchSize, staged, ...(after ?? [])],
    );
    const where = columns.map((c, i) => `${c} = $${i + 3}`).join(" AND ");
    for (const row of rows) {
      const keyValues = columns.map((c) => row[c]);
      let sealed: Buffer;
      try {
        sealed = this.sealedBox.reseal(row.sealed, table.context(row as Record<string, string>), row.keyVersion);
      } catch (err) {
        if (!(err instanceof SealedBoxError)) throw err;
        const counts = result.unreadable[table.name];
        counts[row.keyVersion] = (counts[row.keyVersion] ?? 0) + 1;
        continue;
      }
      await client.query(
        `UPDATE ${table.name} SET sealed = $1, key_version = $2
         WHERE ${where} AND key_version = $${columns.length + 3}`,
        [sealed, active, ...keyValues, row.keyVersion],
      );
      result.moved[table.name]++;
    }
    const lastRow = rows.at(-1);
    return { rows: rows.length, last: lastRow ? columns.map((c) => lastRow[c]) : undefined };
  }

  /** Counts only: how many rows moved, and which versions could not be opened (once per change). */
  private report(result: PassResult): void {
    this.last = result;
    const { platform_configs: configs, signing_keys: keys } = result.moved;
    const keyVersion = this.sealedBox.keyVersion;
    if (configs + keys > 0) {
      this.log.info(
        { keyVersion, platformConfigs: configs, signingKeys: keys },
        "sealed rows moved to the active master key",
      );
    }
    const unreadable = {
      platformConfigs: result.unreadable.platform_configs,
      signingKeys: result.unreadable.signing_keys,
    };
    const summary = JSON.stringify(unreadable);
    const none = Object.keys(unreadable.platformConfigs).length + Object.keys(unreadable.signingKeys).length === 0;
    if (!none && summary !== this.lastWarning) {
      this.log.warn(
        { keyVersion, knownVersions: this.sealedBox.versions, unreadableByVersion: unreadable },
        "sealed rows that no configured master key opens: list their key in HERALD_MASTER_KEYS_PREVIOUS, or upload those platform configs again",
      );
    }
    this.lastWarning = none ? "" : summary;
  }
}
