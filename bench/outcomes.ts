import { randomUUID } from "node:crypto";
import { copyFileSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { create, toBinary } from "@bufbuild/protobuf";
import { Platform } from "@herald/proto/common";
import { OutcomeBatchSchema, OutcomeKind } from "@herald/proto/delivery";
import { createPool, migrate, type Pool } from "@herald/runtime";
import { decodeOutcomeBatch } from "../services/campaign/src/outcome-consumer.js";
import { OutcomeStore } from "../services/campaign/src/outcome-store.js";
import { ReceiptStore } from "../services/campaign/src/receipt-store.js";
import { decodeRows, recordRows } from "./baselines/outcome-rows.js";
import { median, option, QUICK, ROUNDS, root, writeResult } from "./common.js";
import { cpuOfNamed } from "./proc-stats.js";

// Outcome ingestion, before and after receipt batches (issue 31, part 3), side by side in
// one run, interleaved round by round: the same OutcomeBatch messages (a campaign of
// --receipts devices in delivery batches of 500, 96 % delivered, 2 % failed, 1 % bounced,
// 1 % throttled) decoded and recorded 100 messages a transaction, as the campaign
// service's outcome consumer does, into
// - rows: one `outcomes` row per device (bench/baselines/outcome-rows.ts: the code and
//   schema before), and
// - batches: one `receipt_batches` row per message (services/campaign/src/outcome-store.ts,
//   deliveries.* webhook events into the outbox included).
// CPU is this process's (decode + store: the campaign service's part; the JetStream fetch
// and ack around them are the same for both sides and not run) plus PostgreSQL's; bytes are
// pg_total_relation_size of the receipts' table (heap, TOAST and indexes). The batches side
// also times reading every receipt back in export order (ReceiptStore.export).

const RECEIPTS = option("receipts", QUICK ? 100_000 : 1_000_000);
const PER_BATCH = 500;
const PER_TRANSACTION = 100;

export interface OutcomesContext {
  databaseUrl: string;
}

interface Run {
  side: "rows" | "batches";
  round: number;
  seconds: number;
  perSecond: number;
  /** CPU seconds per 10k receipts: this process (decode + store), PostgreSQL, and both. */
  serviceCpuPer10k: number;
  postgresCpuPer10k: number;
  cpuPer10k: number;
  bytes: number;
  bytesPerReceipt: number;
  exportSeconds?: number;
}

/** The messages of one campaign, as the senders publish them (devices in id order, as fan-out walks them). */
function messages(campaignId: string): Uint8Array[] {
  const ids = Array.from({ length: RECEIPTS }, () => randomUUID()).sort();
  const out: Uint8Array[] = [];
  for (let seq = 0; seq * PER_BATCH < ids.length; seq++) {
    const outcomes = ids.slice(seq * PER_BATCH, (seq + 1) * PER_BATCH).map((deviceId, i) => {
      const r = (seq * PER_BATCH + i) % 100;
      const kind =
        r < 96
          ? OutcomeKind.DELIVERED
          : r < 98
            ? OutcomeKind.FAILED
            : r < 99
              ? OutcomeKind.BOUNCED
              : OutcomeKind.THROTTLED;
      return { deviceId, kind, reason: kind === OutcomeKind.DELIVERED ? "" : "Unregistered", attempts: 1 };
    });
    out.push(
      toBinary(
        OutcomeBatchSchema,
        create(OutcomeBatchSchema, { campaignId, sequence: BigInt(seq), platform: Platform.IOS, outcomes }),
      ),
    );
  }
  return out;
}

/** The campaign service's migrations up to (and without) the first one named `stop`. */
function migrationsBefore(stop: string): string {
  const dir = path.join(root, "services/campaign/migrations");
  const tmp = mkdtempSync(path.join(os.tmpdir(), "herald-migrations-"));
  for (const f of readdirSync(dir).filter((f) => f < stop)) copyFileSync(path.join(dir, f), path.join(tmp, f));
  return tmp;
}

async function side(
  name: Run["side"],
  round: number,
  databaseUrl: string,
  msgs: Uint8Array[],
  campaignId: string,
  dirs: Record<Run["side"], string>,
): Promise<Run> {
  const schema = `bench_outcomes_${name}_${round}`;
  const pool: Pool = createPool({ url: databaseUrl, schema, max: 2 });
  try {
    await pool.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await migrate(pool, schema, dirs[name]);
    await pool.query(
      `INSERT INTO campaigns (id, app_id, name, status, contents, target_kind, audience_size, fanout_started, fanout_done)
       VALUES ($1, $2, 'bench', 'sending', '{"en": {"title": "t", "body": "b"}}', 'all', $3, true, true)`,
      [campaignId, randomUUID(), RECEIPTS],
    );
    await pool.query("CHECKPOINT").catch(() => undefined);
    const store = new OutcomeStore(pool);
    const pg = cpuOfNamed(["postgres"]);
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    for (let i = 0; i < msgs.length; i += PER_TRANSACTION) {
      const group = msgs.slice(i, i + PER_TRANSACTION);
      if (name === "rows") await recordRows(pool, group.flatMap(decodeRows));
      else await store.record(group.map(decodeOutcomeBatch));
    }
    const seconds = (performance.now() - t0) / 1000;
    const cpu = process.cpuUsage(cpu0);
    const serviceCpu = (cpu.user + cpu.system) / 1e6;
    const postgresCpu = pg.stop();
    const { rows } = await pool.query<{ status: string; sent: string }>(
      "SELECT status, sent FROM campaigns WHERE id = $1",
      [campaignId],
    );
    if (rows[0]?.status !== "completed" || Number(rows[0].sent) !== RECEIPTS) {
      throw new Error(`${name}: campaign ${rows[0]?.status} with ${rows[0]?.sent} of ${RECEIPTS} outcomes`);
    }
    const table = name === "rows" ? "outcomes" : "receipt_batches";
    const { rows: size } = await pool.query<{ bytes: string }>(`SELECT pg_total_relation_size('${table}') AS bytes`);
    const bytes = Number(size[0]!.bytes);
    const per10k = (s: number) => (s / RECEIPTS) * 10_000;
    const run: Run = {
      side: name,
      round,
      seconds,
      perSecond: RECEIPTS / seconds,
      serviceCpuPer10k: per10k(serviceCpu),
      postgresCpuPer10k: per10k(postgresCpu),
      cpuPer10k: per10k(serviceCpu + postgresCpu),
      bytes,
      bytesPerReceipt: bytes / RECEIPTS,
    };
    if (name === "batches") {
      const e0 = performance.now();
      let n = 0;
      for await (const chunk of new ReceiptStore(pool).export(campaignId, { outcome: 0, platform: 0 }))
        n += chunk.deviceIds.length;
      if (n !== RECEIPTS) throw new Error(`export read ${n} of ${RECEIPTS} receipts`);
      run.exportSeconds = (performance.now() - e0) / 1000;
    }
    console.log(
      `outcomes: ${name} round ${round}: ${Math.round(run.perSecond)}/s, CPU per 10k ${run.cpuPer10k.toFixed(3)} s ` +
        `(service ${run.serviceCpuPer10k.toFixed(3)}, PostgreSQL ${run.postgresCpuPer10k.toFixed(3)}), ` +
        `${run.bytesPerReceipt.toFixed(1)} bytes a receipt${run.exportSeconds ? `, export ${run.exportSeconds.toFixed(1)} s` : ""}`,
    );
    return run;
  } finally {
    await pool.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`).catch(() => undefined);
    await pool.end();
  }
}

export async function outcomes(ctx: OutcomesContext): Promise<void> {
  const dirs = { rows: migrationsBefore("006"), batches: path.join(root, "services/campaign/migrations") };
  const runs: Run[] = [];
  try {
    for (let round = 1; round <= ROUNDS; round++) {
      const campaignId = randomUUID();
      const msgs = messages(campaignId);
      const order: Run["side"][] = round % 2 ? ["rows", "batches"] : ["batches", "rows"];
      for (const name of order) runs.push(await side(name, round, ctx.databaseUrl, msgs, campaignId, dirs));
    }
  } finally {
    rmSync(dirs.rows, { recursive: true, force: true });
  }
  const med = (name: Run["side"], f: (r: Run) => number) => median(runs.filter((r) => r.side === name).map(f));
  const line = (name: Run["side"], label: string) =>
    `| ${label} | ${Math.round(med(name, (r) => r.perSecond)).toLocaleString("en")} | ${med(name, (r) => r.serviceCpuPer10k).toFixed(3)} | ` +
    `${med(name, (r) => r.postgresCpuPer10k).toFixed(3)} | ${med(name, (r) => r.cpuPer10k).toFixed(3)} | ` +
    `${med(name, (r) => r.bytesPerReceipt).toFixed(1)} | ${(med(name, (r) => r.bytes) / 2 ** 20).toFixed(1)} |`;
  const ratio = (f: (r: Run) => number) => (med("batches", f) / med("rows", f)).toFixed(2);
  const table = [
    `Outcome ingestion of ${RECEIPTS.toLocaleString("en")} receipts (${PER_BATCH} a message, ${PER_TRANSACTION} messages a transaction), medians of ${ROUNDS} round(s)`,
    "",
    "| side | receipts/s | service CPU s/10k | PostgreSQL CPU s/10k | CPU s/10k | bytes/receipt | MB |",
    "|---|---|---|---|---|---|---|",
    line("rows", "rows (before: one row per device)"),
    line("batches", "batches (now: one row per message)"),
    "",
    `batches/rows: CPU per 10k ${ratio((r) => r.cpuPer10k)} ×, bytes ${ratio((r) => r.bytes)} ×, rate ${ratio((r) => r.perSecond)} ×; ` +
      `every receipt read back in export order: ${med("batches", (r) => r.exportSeconds ?? 0).toFixed(1)} s`,
  ].join("\n");
  console.log(`\n${table}\n`);
  writeResult(
    `outcomes${QUICK ? "-quick" : ""}`,
    { receipts: RECEIPTS, perBatch: PER_BATCH, perTransaction: PER_TRANSACTION, runs },
    table,
  );
}
