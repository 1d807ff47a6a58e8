import { execFileSync } from "node:child_process";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { type K8sObject, ofKind, render, renderer } from "./chart-support.js";

// The dashboard and the alerts the chart ships query metrics by name: every name must be
// one the code exports, or the panel stays empty and the alert never fires.

const root = path.resolve(import.meta.dirname, "../../..");

/** Every metric name the code registers (prom-client `name: "herald_…"`). */
function exportedMetrics(): Set<string> {
  const out = execFileSync("git", ["grep", "-h", "-o", "-E", 'name: "herald_[a-z_]+"', "--", "*.ts"], {
    cwd: root,
    encoding: "utf8",
  });
  return new Set(out.split("\n").flatMap((l) => /"(herald_[a-z_]+)"/.exec(l)?.[1] ?? []));
}

/** herald_… names a PromQL expression uses, histogram suffixes folded to the histogram. */
function queried(expr: string): string[] {
  return [...expr.matchAll(/\b(herald_[a-z_]+)/g)].map((m) => m[1]!.replace(/_(bucket|count|sum)$/, ""));
}

let objects: K8sObject[];
let metrics: Set<string>;

beforeAll(async () => {
  await renderer();
  objects = await render({ set: ["prometheusRule.enabled=true", "grafanaDashboard.enabled=true"] });
  metrics = exportedMetrics();
});

describe("the Grafana dashboard", () => {
  it("ships as a ConfigMap with the sidecar's label, holding valid dashboard JSON", () => {
    const cm = ofKind(objects, "ConfigMap").find((c) => c.metadata.name.endsWith("-dashboard"));
    expect(cm?.metadata.labels?.grafana_dashboard).toBe("1");
    const dashboard = JSON.parse(cm!.data["herald.json"]);
    expect(dashboard.uid).toBe("herald-overview");
    expect(dashboard.panels.filter((p: any) => p.type !== "row").length).toBeGreaterThanOrEqual(12);
  });

  it("queries only metrics the code exports, and covers deliveries, provider latency, retries, backlog and API latency", () => {
    const cm = ofKind(objects, "ConfigMap").find((c) => c.metadata.name.endsWith("-dashboard"))!;
    const exprs: string[] = JSON.parse(cm.data["herald.json"]).panels.flatMap((p: any) =>
      (p.targets ?? []).map((t: any) => t.expr),
    );
    const used = new Set(exprs.flatMap(queried));
    for (const name of used) expect(metrics, `${name} is not exported by any process`).toContain(name);
    for (const needed of [
      "herald_deliveries_total",
      "herald_provider_request_duration_seconds",
      "herald_sender_attempts_total",
      "herald_sender_backlog_batches",
      "herald_gateway_request_duration_seconds",
    ]) {
      expect(used, needed).toContain(needed);
    }
  });
});

describe("the PrometheusRule", () => {
  it("alerts on a growing backlog, provider errors, failed campaigns and processes down, on exported metrics", () => {
    const [rule] = ofKind(objects, "PrometheusRule");
    const rules: { alert: string; expr: string; labels: { severity: string } }[] = rule!.spec.groups[0].rules;
    expect(rules.map((r) => r.alert)).toEqual(
      expect.arrayContaining([
        "HeraldSenderBacklogGrowing",
        "HeraldProviderErrorRatioHigh",
        "HeraldCampaignFailed",
        "HeraldProcessDown",
      ]),
    );
    for (const r of rules) {
      for (const name of queried(r.expr)) expect(metrics, `${r.alert}: ${name}`).toContain(name);
      expect(["warning", "critical"]).toContain(r.labels.severity);
      // Scoped to the release's namespace, so two installs do not page for each other.
      expect(r.expr).toContain('namespace="default"');
    }
    const down = rules.find((r) => r.alert === "HeraldProcessDown")!;
    expect(down.expr).toContain('service=~"herald-.*"');
  });

  it("takes its thresholds from values", async () => {
    const custom = await render({
      set: ["prometheusRule.enabled=true", "prometheusRule.thresholds.backlogBatches=7"],
    });
    const rules = ofKind(custom, "PrometheusRule")[0]!.spec.groups[0].rules;
    expect(rules.find((r: any) => r.alert === "HeraldSenderBacklogGrowing").expr).toContain("> 7");
  });
});
