import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { once } from "node:events";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import pg from "pg";
import { parseAllDocuments } from "yaml";
import { renderChart } from "../../scripts/helm-render.mjs";
import { HERALD_NODE_OPTIONS, SOURCE_NODE_ARGS } from "../../scripts/processes.mjs";
import { stageRelease } from "../../scripts/stage-release.mjs";
import { deleteNamespaceStreams } from "./nats-streams.js";
import { freePort, restClient } from "./stack.js";
import { uniqueName } from "./unique.js";
import { untilServing, waitWhileRunning } from "./wait.js";
import type { InfraUrls } from "./infra-urls.js";

// "The cluster in a test": the chart rendered with external infrastructure pointed at the
// local PostgreSQL/NATS/Redis, and each Deployment's container started as local processes
// exactly as rendered — command, args, env resolved from the rendered Secrets and
// ConfigMaps, probes — from the production build with production dependencies only
// (scripts/stage-release.mjs, what deploy/Dockerfile puts in the image).
//
// What stands in for the cluster, and nothing more:
// - the image's /app is the staged release folder (the image's WORKDIR and paths);
// - a Service's DNS name resolves to 127.0.0.1 (its port is the container's, as the chart
//   renders them equal);
// - each pod gets its own ports (as pods get their own IPs): replica 0 uses the ports
//   the chart was rendered with, other replicas fresh ones, and a Service reaches the
//   oldest ready replica;
// - fieldRef env (POD_NAME, POD_NAMESPACE, NODE_NAME, …) gets the pod's made-up name.

export const CHART_DIR = path.resolve(import.meta.dirname, "../../charts/herald");
const root = path.resolve(import.meta.dirname, "../..");

export type K8sObject = {
  apiVersion: string;
  kind: string;
  metadata: { name: string; [k: string]: unknown };
  [k: string]: any;
};

/** Parses `helm template` output into objects (empty documents dropped). */
export function parseManifests(yamlText: string): K8sObject[] {
  return parseAllDocuments(yamlText)
    .map((d) => {
      if (d.errors.length > 0) throw new Error(`rendered YAML does not parse: ${d.errors[0]!.message}`);
      return d.toJS() as K8sObject | null;
    })
    .filter((o): o is K8sObject => o !== null && typeof o === "object");
}

let staged: Promise<string> | undefined;

/** The production release folder, built and staged once per test file. */
export function stagedRelease(): Promise<string> {
  staged ??= Promise.resolve().then(() =>
    stageRelease(mkdtempSync(path.join(os.tmpdir(), "herald-release-")), { build: true, preferOffline: true }),
  );
  return staged;
}

export interface Pod {
  name: string;
  /** Role from the container's args: gateway, sender-webpush, … */
  role: string;
  deployment: string;
  /** containerPort → the port this pod really listens on. */
  ports: Map<number, number>;
  namedPorts: Map<string, number>;
  child: ChildProcess;
  output: string[];
  env: Record<string, string>;
}

type ProbeKind = "readinessProbe" | "livenessProbe" | "startupProbe";

export interface ChartCluster {
  manifests: K8sObject[];
  releaseDir: string;
  databaseUrl: string;
  natsNamespace: string;
  simAdminUrl: string;
  apiKey: string;
  /** The gateway Service, as the test reaches it: its oldest ready pod. */
  gatewayUrl(): string;
  pods: Pod[];
  podsOf(role: string): Pod[];
  deployments: K8sObject[];
  /** GET on a probe of a pod (readinessProbe, livenessProbe or startupProbe): its status. */
  probe(pod: Pod, kind: ProbeKind): Promise<number>;
  /** Starts one more pod of a Deployment and waits until it is ready (a rolling update's surge). */
  surge(deployment: string): Promise<Pod>;
  /** SIGTERM, as the kubelet sends it, then waits for the exit (SIGKILL after the grace period). */
  terminate(pod: Pod): Promise<number | null>;
  logs(): string;
  stop(): Promise<void>;
}

export interface ChartClusterOptions {
  /** Extra chart values, merged over what the cluster sets (infrastructure, ports). */
  values?: (ports: Record<string, number>) => Record<string, unknown>;
}

const COMPONENTS = {
  gateway: "gateway",
  credential: "credential",
  deviceRegistry: "device-registry",
  campaign: "campaign",
  senderApns: "sender-apns",
  senderFcm: "sender-fcm",
  senderWebpush: "sender-webpush",
} as const;

/** Deep merge of plain objects (b wins); arrays and scalars replace. */
function merge(a: Record<string, any>, b: Record<string, any>): Record<string, any> {
  const out: Record<string, any> = { ...a };
  for (const [k, v] of Object.entries(b)) {
    out[k] =
      v && typeof v === "object" && !Array.isArray(v) && out[k] && typeof out[k] === "object" ? merge(out[k], v) : v;
  }
  return out;
}

async function createDatabase(baseUrl: string, name: string): Promise<string> {
  const client = new pg.Client({ connectionString: baseUrl });
  await client.connect();
  try {
    await client.query(`CREATE DATABASE "${name}"`);
  } finally {
    await client.end();
  }
  const url = new URL(baseUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

async function dropDatabase(baseUrl: string, name: string): Promise<void> {
  const client = new pg.Client({ connectionString: baseUrl });
  await client.connect();
  try {
    await client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  } finally {
    await client.end();
  }
}

function decodeData(obj: K8sObject): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries((obj.data ?? {}) as Record<string, string>)) {
    out[k] = obj.kind === "Secret" ? Buffer.from(v, "base64").toString("utf8") : v;
  }
  for (const [k, v] of Object.entries((obj.stringData ?? {}) as Record<string, string>)) out[k] = v;
  return out;
}

export async function startChartCluster(infra: InfraUrls, opts: ChartClusterOptions = {}): Promise<ChartCluster> {
  const releaseDir = await stagedRelease();
  const id = uniqueName("chart");
  const namespace = "herald-test";
  const dbName = id.toLowerCase().replace(/[^a-z0-9_]/g, "_");
  const databaseUrl = await createDatabase(infra.databaseUrl, dbName);
  const pods: Pod[] = [];
  const deploymentsSeen: K8sObject[] = [];
  const work = mkdtempSync(path.join(os.tmpdir(), "herald-chart-"));
  let sim: { child: ChildProcess; output: string[] } | undefined;

  const stop = async () => {
    await Promise.all(pods.map((p) => terminate(p)));
    if (sim) await terminateChild(sim.child, 5_000);
    await dropDatabase(infra.databaseUrl, dbName).catch(() => undefined);
    await deleteNamespaceStreams(infra.natsUrl, id).catch(() => undefined);
    rmSync(work, { recursive: true, force: true });
  };

  try {
    // The provider simulator (a dev tool, not part of the chart) plays Apple, Google and the browsers.
    const simPort = await freePort();
    const simAdminPort = await freePort();
    const simOrigin = `https://127.0.0.1:${simPort}`;
    const simOutput: string[] = [];
    const simChild = spawn(process.execPath, [...SOURCE_NODE_ARGS, "services/provider-sim/src/main.ts"], {
      cwd: root,
      env: { ...process.env, PORT: String(simPort), ADMIN_PORT: String(simAdminPort), LOG_LEVEL: "warn" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    simChild.stdout!.setEncoding("utf8").on("data", (d: string) => simOutput.push(d));
    simChild.stderr!.setEncoding("utf8").on("data", (d: string) => simOutput.push(d));
    sim = { child: simChild, output: simOutput };
    const simAdminUrl = `http://127.0.0.1:${simAdminPort}`;
    await untilServing(simChild, "the provider simulator", `${simAdminUrl}/healthz`, {
      timeoutMs: 60_000,
      everyMs: 200,
      output: simOutput,
    });

    // Ports of replica 0 of each component, rendered into the chart.
    const ports: Record<string, number> = {};
    for (const key of Object.keys(COMPONENTS)) {
      ports[`${key}.port`] = await freePort();
      ports[`${key}.adminPort`] = await freePort();
    }
    const portValues = Object.fromEntries(
      Object.keys(COMPONENTS).map((key) => [
        key,
        key.startsWith("sender")
          ? { adminPort: ports[`${key}.adminPort`] }
          : key === "gateway"
            ? { port: ports[`${key}.port`] }
            : { port: ports[`${key}.port`], adminPort: ports[`${key}.adminPort`] },
      ]),
    );
    const base = {
      postgresql: { url: databaseUrl },
      nats: { url: infra.natsUrl, namespace: id },
      redis: { url: infra.redisUrl, keyPrefix: `${id}:` },
      webPush: { allowPrivate: true },
      // The simulator's CA, as a cluster would mount a CA bundle; verification stays on.
      env: { NODE_EXTRA_CA_CERTS: process.env.NODE_EXTRA_CA_CERTS ?? "" },
      components: merge(portValues, {
        senderApns: { config: { apnsUrl: simOrigin } },
        senderFcm: { config: { fcmUrl: simOrigin, fcmTokenUrl: `${simOrigin}/token` } },
      }),
    };
    const values = merge(base, opts.values?.(ports) ?? {});
    const valuesFile = path.join(work, "values.json");
    writeFileSync(valuesFile, JSON.stringify(values));
    const manifests = parseManifests(
      await renderChart({ chartDir: CHART_DIR, releaseName: "herald", namespace, valuesFiles: [valuesFile] }),
    );

    const byKind = (kind: string) => manifests.filter((m) => m.kind === kind);
    const data = new Map<string, Record<string, string>>();
    for (const m of [...byKind("Secret"), ...byKind("ConfigMap")])
      data.set(`${m.kind}/${m.metadata.name}`, decodeData(m));
    const services = byKind("Service");
    const serviceHosts = new Set(
      services.flatMap((s) => {
        const n = s.metadata.name;
        return [n, `${n}.${namespace}`, `${n}.${namespace}.svc`, `${n}.${namespace}.svc.cluster.local`];
      }),
    );
    const deployments = byKind("Deployment");
    deploymentsSeen.push(...deployments);
    const apiKey = [...data.entries()].find(([k, v]) => k.startsWith("Secret/") && v.HERALD_BOOTSTRAP_API_KEY)?.[1]
      .HERALD_BOOTSTRAP_API_KEY;
    if (!apiKey) throw new Error("no rendered Secret holds HERALD_BOOTSTRAP_API_KEY");

    /** A rendered Service port → the port of the oldest ready pod behind it. */
    const servicePort = (serviceName: string, port: number): number => {
      const svc = services.find((s) => s.metadata.name === serviceName)!;
      const sp = (svc.spec.ports as any[]).find((p) => p.port === port);
      const selector = svc.spec.selector as Record<string, string>;
      const target = sp?.targetPort ?? port;
      const backing = pods.find((p) => {
        const dep = deployments.find((d) => d.metadata.name === p.deployment)!;
        const labels = dep.spec.template.metadata.labels as Record<string, string>;
        return p.child.exitCode === null && Object.entries(selector).every(([k, v]) => labels[k] === v);
      });
      if (!backing) return port;
      return typeof target === "number"
        ? (backing.ports.get(target) ?? port)
        : (backing.namedPorts.get(target) ?? port);
    };

    /** A URL whose host is a Service's DNS name → the loopback address and the backing pod's port. */
    const resolveUrl = (value: string): string => {
      if (!/^[a-z][a-z0-9+.-]*:\/\//i.test(value)) return value;
      let url: URL;
      try {
        url = new URL(value);
      } catch {
        return value;
      }
      if (!serviceHosts.has(url.hostname)) return value;
      const serviceName = url.hostname.split(".")[0]!;
      url.hostname = "127.0.0.1";
      if (url.port) url.port = String(servicePort(serviceName, Number(url.port)));
      return url.toString().replace(/\/$/, value.endsWith("/") ? "/" : "");
    };

    const containerEnv = (dep: K8sObject, podName: string): Record<string, string> => {
      const c = dep.spec.template.spec.containers[0];
      const env: Record<string, string> = {};
      for (const from of (c.envFrom ?? []) as any[]) {
        const ref = from.configMapRef ? `ConfigMap/${from.configMapRef.name}` : `Secret/${from.secretRef.name}`;
        const d = data.get(ref);
        if (!d) throw new Error(`${dep.metadata.name}: envFrom ${ref} is not rendered`);
        for (const [k, v] of Object.entries(d)) env[`${from.prefix ?? ""}${k}`] = v;
      }
      for (const e of (c.env ?? []) as any[]) {
        if ("value" in e) {
          env[e.name] = String(e.value).replace(/\$\(([A-Za-z_][A-Za-z0-9_]*)\)/g, (m, n) => env[n] ?? m);
        } else if (e.valueFrom?.secretKeyRef || e.valueFrom?.configMapKeyRef) {
          const ref = e.valueFrom.secretKeyRef ?? e.valueFrom.configMapKeyRef;
          const kind = e.valueFrom.secretKeyRef ? "Secret" : "ConfigMap";
          const value = data.get(`${kind}/${ref.name}`)?.[ref.key];
          if (value === undefined && !ref.optional) {
            throw new Error(
              `${dep.metadata.name}: ${e.name} refers to ${kind}/${ref.name} key ${ref.key}, not rendered`,
            );
          }
          if (value !== undefined) env[e.name] = value;
        } else if (e.valueFrom?.fieldRef) {
          const f = e.valueFrom.fieldRef.fieldPath as string;
          env[e.name] =
            f === "metadata.name"
              ? podName
              : f === "metadata.namespace"
                ? namespace
                : f === "spec.nodeName"
                  ? "local-node"
                  : f.startsWith("status.pod") || f === "status.hostIP"
                    ? "127.0.0.1"
                    : "";
        } else if (e.valueFrom?.resourceFieldRef) {
          env[e.name] = "0";
        }
      }
      return env;
    };

    const launch = async (dep: K8sObject, replica: number): Promise<Pod> => {
      const c = dep.spec.template.spec.containers[0];
      const podName = `${dep.metadata.name}-${randomBytes(4).toString("hex")}`;
      const portMap = new Map<number, number>();
      const namedPorts = new Map<string, number>();
      for (const p of (c.ports ?? []) as any[]) {
        const real = replica === 0 ? p.containerPort : await freePort();
        portMap.set(p.containerPort, real);
        if (p.name) namedPorts.set(p.name, real);
      }
      const rendered = containerEnv(dep, podName);
      const env: Record<string, string> = {};
      for (const [k, v] of Object.entries(rendered)) {
        // Per-pod ports (see the top of the file); URLs to Services go to the loopback.
        env[k] = /^\d+$/.test(v) && portMap.has(Number(v)) ? String(portMap.get(Number(v))) : resolveUrl(v);
      }
      // The image: /app is the staged release, `node` is Node 24, NODE_ENV and NODE_OPTIONS from the Dockerfile.
      const [cmd, ...cmdArgs] = [...(c.command ?? []), ...(c.args ?? [])] as string[];
      if (cmd !== "node") throw new Error(`${dep.metadata.name}: command ${cmd} is not node`);
      const args = cmdArgs.map((a) => (a.startsWith("/app/") ? path.join(releaseDir, a.slice(5)) : a));
      const child = spawn(process.execPath, args, {
        cwd: releaseDir,
        env: {
          PATH: process.env.PATH ?? "",
          NODE_ENV: "production",
          NODE_OPTIONS: HERALD_NODE_OPTIONS,
          HOME: work,
          ...env,
        },
        stdio: ["ignore", "pipe", "pipe"],
      });
      const output: string[] = [];
      child.stdout!.setEncoding("utf8").on("data", (d: string) => output.push(d));
      child.stderr!.setEncoding("utf8").on("data", (d: string) => output.push(d));
      const pod: Pod = {
        name: podName,
        role: String(c.args?.[0] ?? ""),
        deployment: dep.metadata.name,
        ports: portMap,
        namedPorts,
        child,
        output,
        env,
      };
      pods.push(pod);
      return pod;
    };

    /** The kubelet's httpGet probe: the status (0 when nothing answered) and the body, for diagnostics. */
    const probeAnswer = async (pod: Pod, kind: ProbeKind): Promise<{ status: number; body: string }> => {
      const dep = deployments.find((d) => d.metadata.name === pod.deployment)!;
      const get = dep.spec.template.spec.containers[0][kind]?.httpGet;
      if (!get) throw new Error(`${pod.deployment} has no httpGet ${kind}`);
      const port = typeof get.port === "number" ? pod.ports.get(get.port) : pod.namedPorts.get(get.port);
      if (!port) throw new Error(`${pod.deployment}: ${kind} port ${get.port} is not a container port`);
      return fetch(`http://127.0.0.1:${port}${get.path}`, { signal: AbortSignal.timeout(3_000) }).then(
        async (r) => ({ status: r.status, body: await r.text().catch(() => "") }),
        (err: Error) => ({ status: 0, body: err.message }),
      );
    };
    const probe = async (pod: Pod, kind: ProbeKind) => (await probeAnswer(pod, kind)).status;
    /** As long as the kubelet gives a pod to start: its startupProbe's period × failure threshold. */
    const startupBudgetMs = (pod: Pod): number => {
      const dep = deployments.find((d) => d.metadata.name === pod.deployment)!;
      const sp = dep.spec.template.spec.containers[0].startupProbe ?? {};
      return (sp.periodSeconds ?? 10) * (sp.failureThreshold ?? 3) * 1000;
    };
    const waitReady = async (pod: Pod) => {
      let last = { status: 0, body: "not probed yet" };
      try {
        await waitWhileRunning(
          `${pod.name} to be ready`,
          async () => {
            last = await probeAnswer(pod, "readinessProbe");
            return last.status === 200;
          },
          { timeoutMs: startupBudgetMs(pod), everyMs: 200, watched: pod },
        );
      } catch (err) {
        throw new Error(`${(err as Error).message}\nlast readiness answer: ${last.status} ${last.body.slice(0, 500)}`);
      }
    };

    const replicasOf = (dep: K8sObject) => (dep.spec.replicas ?? 1) as number;
    const launchedAt = Date.now();
    for (const dep of deployments) for (let r = 0; r < replicasOf(dep); r++) await launch(dep, r);
    // Every pod that did not get ready is named, not only the first: a gateway waits on its backends.
    const notReady = (await Promise.allSettled(pods.map(waitReady))).flatMap((r) =>
      r.status === "rejected" ? [(r.reason as Error).message] : [],
    );
    if (notReady.length > 0)
      throw new Error(`${notReady.length} of ${pods.length} pods not ready:\n${notReady.join("\n\n")}`);
    console.log(`${pods.length} pods ready ${((Date.now() - launchedAt) / 1000).toFixed(1)} s after launch`);

    const gatewayDep = deployments.find((d) => d.spec.template.spec.containers[0].args?.[0] === "gateway");
    return {
      manifests,
      releaseDir,
      databaseUrl,
      natsNamespace: id,
      simAdminUrl,
      apiKey,
      gatewayUrl: () => {
        const gw = pods.find((p) => p.deployment === gatewayDep?.metadata.name && p.child.exitCode === null);
        if (!gw) throw new Error("no gateway pod is running");
        return `http://127.0.0.1:${[...gw.ports.values()][0]}`;
      },
      pods,
      podsOf: (role) => pods.filter((p) => p.role === role && p.child.exitCode === null && p.child.signalCode === null),
      deployments,
      probe,
      surge: async (deployment) => {
        const dep = deployments.find((d) => d.metadata.name === deployment)!;
        const pod = await launch(dep, 1);
        await waitReady(pod);
        return pod;
      },
      terminate,
      logs: () => [...pods.map((p) => p.output.join("")), simOutput.join("")].join("\n"),
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }

  /** As the kubelet does: SIGTERM, SIGKILL after the pod's terminationGracePeriodSeconds. */
  function terminate(pod: Pod): Promise<number | null> {
    const dep = deploymentsSeen.find((d) => d.metadata.name === pod.deployment);
    const grace = (dep?.spec.template.spec.terminationGracePeriodSeconds ?? 30) as number;
    return terminateChild(pod.child, grace * 1000);
  }
}

/** SIGTERM, then SIGKILL once `graceMs` have passed; resolves with the exit code. */
async function terminateChild(child: ChildProcess, graceMs: number): Promise<number | null> {
  if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
  const exited = once(child, "exit");
  child.kill("SIGTERM");
  const timer = setTimeout(() => child.kill("SIGKILL"), graceMs);
  await exited;
  clearTimeout(timer);
  return child.exitCode;
}

export { restClient };
