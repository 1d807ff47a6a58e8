import type { FaultResult } from "./run-fault.js";

export interface ReportMeta {
  profile: string;
  date: string;
  devices: number;
  batchSize: number;
  settings: string[];
  machine: string;
  durationMs: number;
  /** Faults of the catalogue this profile leaves out. */
  skipped: string[];
  /** Faults that threw before a result existed (stuck campaign, undrained stream). */
  errors: { title: string; error: string }[];
}

const s = (ms: number) => (ms / 1000).toFixed(1);
const n = (v: number) => v.toLocaleString("en");

/** True when the result keeps every promise of the suite. */
export function resultHolds(r: FaultResult): boolean {
  const { sent, delivered, failed, bounced, throttled } = r.stats;
  return (
    r.lost === 0 &&
    r.strangers === 0 &&
    r.duplicateDevices <= r.bound &&
    r.audience === r.outcomeRows &&
    r.outcomeRows === r.outcomeDevices &&
    sent === r.audience &&
    delivered + failed + bounced + throttled === sent
  );
}

export function renderTable(results: FaultResult[]): string {
  const lines = [
    "| fault | struck at | resumed (s) | completed (s) | campaign (s) | sent / audience | delivered | lost | devices with a duplicate | extra pushes | bound | holds |",
    "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|",
  ];
  for (const r of results) {
    const baseline = r.id === "baseline";
    lines.push(
      `| ${r.title} | ${baseline ? `(${r.injectedAt})` : r.injectedAt} | ${baseline ? "—" : s(r.resumeMs)} | ${s(r.completeMs)} | ${s(r.campaignMs)} | ` +
        `${n(r.stats.sent)} / ${n(r.audience)} | ${n(r.stats.delivered)} | ${n(r.lost)} | ${n(r.duplicateDevices)} | ` +
        `${n(r.extraDeliveries)} | ${n(r.bound)} | ${resultHolds(r) ? "yes" : "**no**"} |`,
    );
  }
  return lines.join("\n");
}

export function renderReport(meta: ReportMeta, results: FaultResult[]): string {
  const faults = results.filter((r) => r.id !== "baseline");
  const lost = faults.reduce((t, r) => t + r.lost, 0);
  const dups = faults.reduce((t, r) => t + r.duplicateDevices, 0);
  const holding = faults.filter(resultHolds).length;
  const out = [
    `## Chaos: ${meta.profile} profile, ${meta.date}`,
    "",
    `One campaign per fault to the same ${n(meta.devices)} devices (a third each of iOS, Android and web),` +
      " every Herald process from its sources (the processes of `npm run dev`), the provider simulator, and a private" +
      " PostgreSQL, NATS (JetStream, file storage) and Redis started for the run on free ports. Each fault strikes while" +
      " the campaign is delivered. " +
      `${meta.machine}; the whole run took ${(meta.durationMs / 60_000).toFixed(1)} min.`,
    "",
    `**${faults.length} faults injected, ${holding} held; ${n(lost)} notifications lost; ${n(dups)} devices got a duplicate in all.**`,
    "",
    renderTable(results),
    "",
    "- *struck at*: where the campaign stood when the fault began (pushes the simulator had accepted, or fan-out's progress).",
    "- *resumed*: from the fault to the moment everything the fault stopped moved again after the repair —" +
      " pushes accepted by the simulator on the platforms concerned, outcomes recorded by the campaign service, or" +
      " (gateway) the REST API answering; bounded by the completion. It includes the repair itself: a killed process" +
      " stays down 1 s and is then started again (its start-up is part of the figure); a server restart is a graceful" +
      " stop, 1 s down, and a start.",
    "- *completed*: from the fault to the campaign's status `completed` (the baseline: from the point where the" +
      " delivery faults strike, undisturbed); *campaign*: from `POST /v1/push/send`.",
    "- Completion after a fault includes delivering the rest of the campaign (compare the baseline) and, for" +
      " messages in flight when a process died or NATS stopped, their ack wait or lease: a killed sender's batch comes" +
      " back after `SENDER_ACK_WAIT_MS`, a killed campaign service's fan-out after `FANOUT_LEASE_MS`, an outcome batch" +
      " the campaign service had pulled after 30 s.",
    "- *lost*: targeted devices the simulator never got a push for. *devices with a duplicate*: devices that got" +
      " more than one push (*extra pushes* beyond the first); the *bound* is one in-flight batch per sender that" +
      ` was killed or lost NATS (batches of ${meta.batchSize}, one batch at a time per sender), 0 for every other fault.`,
    "- *holds*: lost = 0, sent = audience, delivered + failed + bounced + throttled = sent, exactly one outcome row" +
      " per targeted device, no push outside the audience, duplicates within the bound.",
    "",
    `Settings: ${meta.settings.join("; ")}.`,
  ];
  const undelivered = results.filter((r) => r.undelivered.length > 0);
  if (undelivered.length > 0) {
    out.push("", "Outcomes other than delivered:", "");
    for (const r of undelivered) out.push(`- ${r.title}: ${r.undelivered.join(", ")}`);
  }
  if (meta.skipped.length > 0) out.push("", `Left out of this profile: ${meta.skipped.join("; ")}.`);
  if (meta.errors.length > 0) {
    out.push("", "Faults without a result:", "");
    for (const e of meta.errors) out.push(`- ${e.title}: ${e.error}`);
  }
  return `${out.join("\n")}\n`;
}
