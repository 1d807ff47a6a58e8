import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import type { EnvVar } from "@herald/runtime";
import { configSpec as gatewaySpec } from "../../../gateway/src/config.js";
import { ROLE_NAMES, type RoleName } from "../../../packages/cli/src/roles.js";
import {
  type ChartOptions,
  type RenderError,
  type Renderer,
  ensureRenderer,
  renderChart,
} from "../../../scripts/helm-render.mjs";
import { configSpec as campaignSpec } from "../../../services/campaign/src/config.js";
import { configSpec as credentialSpec } from "../../../services/credential/src/config.js";
import { configSpec as deviceRegistrySpec } from "../../../services/device-registry/src/config.js";
import { configSpec as senderApnsSpec } from "../../../services/sender-apns/src/config.js";
import { configSpec as senderFcmSpec } from "../../../services/sender-fcm/src/config.js";
import { configSpec as senderWebpushSpec } from "../../../services/sender-webpush/src/config.js";
import { configSpec as webhooksSpec } from "../../../services/webhooks/src/config.js";
import { CHART_DIR, type K8sObject as RenderedObject, parseManifests } from "../../../test/support/chart-cluster.js";

// Helpers of the chart tests: rendering with the Go renderer (never a helm on PATH, so
// every machine tests the same thing), schema validation of rendered objects, and what
// the code fixes about each process (the variables it reads, its role name).

export { CHART_DIR, parseManifests };
/** A rendered object, its metadata (labels, annotations) open to reading. */
export type K8sObject = Omit<RenderedObject, "metadata"> & { metadata: { name: string; [k: string]: any } };
export const REPO_ROOT = path.resolve(CHART_DIR, "../..");
export const deployValues = (file: string) => path.join(REPO_ROOT, "deploy/values", file);

// ---------------------------------------------------------------------------------------
// Rendering
// ---------------------------------------------------------------------------------------

let rendererPromise: Promise<Renderer> | undefined;

/** The Go renderer, built once (its Debian packages installed in CI). */
export function renderer(): Promise<Renderer> {
  rendererPromise ??= ensureRenderer({ install: process.env.CI === "true", preferHelm: false });
  return rendererPromise;
}

const tmpDirs: string[] = [];

/** Writes values to a temporary file (JSON is YAML) and returns its path. */
export function valuesFile(values: Record<string, unknown>): string {
  const dir = mkdtempSync(path.join(tmpdir(), "herald-chart-values-"));
  tmpDirs.push(dir);
  const file = path.join(dir, "values.yaml");
  writeFileSync(file, JSON.stringify(values, null, 2));
  return file;
}

export function removeTempFiles(): void {
  for (const d of tmpDirs.splice(0)) rmSync(d, { recursive: true, force: true });
}

export type RenderOptions = Omit<ChartOptions, "chartDir" | "renderer"> & {
  /** Values written to a file passed after valuesFiles. */
  values?: Record<string, unknown>;
  notes?: boolean;
};

function chartOptions(opts: RenderOptions) {
  const { values, ...rest } = opts;
  return {
    ...rest,
    chartDir: CHART_DIR,
    valuesFiles: [...(opts.valuesFiles ?? []), ...(values ? [valuesFile(values)] : [])],
  };
}

export async function renderText(opts: RenderOptions = {}): Promise<string> {
  return renderChart({ ...chartOptions(opts), renderer: await renderer() });
}

export async function render(opts: RenderOptions = {}): Promise<K8sObject[]> {
  return parseManifests(await renderText(opts));
}

/** Renders and expects a failure: the renderer's error (exit code, stderr). */
export async function renderFailure(opts: RenderOptions): Promise<RenderError> {
  const result = await renderText(opts).then(
    () => undefined,
    (err: RenderError) => err,
  );
  if (!result) throw new Error(`the render was expected to fail: ${JSON.stringify(opts)}`);
  return result;
}

export { chartOptions as lintOptions };

// ---------------------------------------------------------------------------------------
// The value sets under test
// ---------------------------------------------------------------------------------------

/** Where a value set says a variable comes from a Secret the user manages. */
export interface SecretSource {
  name: string;
  key: string;
}

export interface ValueSet extends RenderOptions {
  releaseName: string;
  namespace: string;
  /** Variables read from the user's own Secrets: exactly these Secret names and keys. */
  existingSecrets: Record<string, SecretSource>;
  /** NATS_NAMESPACE the processes must get. */
  natsNamespace: string;
  /** nats.monitoringEndpoint KEDA must be given ("" when KEDA is off). */
  natsMonitoringEndpoint: string;
  /** Whether pods are spread (defaults.topologySpread.enabled). */
  topologySpread: boolean;
  /** The roles the set runs. */
  roles: RoleName[];
}

const allRoles = [...ROLE_NAMES];
const SENDERS = ["senderApns", "senderFcm", "senderWebpush"] as const;
const kedaOnAllSenders = (keda: Record<string, unknown> = {}) =>
  Object.fromEntries(SENDERS.map((s) => [s, { autoscaling: { keda: { enabled: true, ...keda } } }]));
const PROD_INFRA = { name: "herald-infra" };
const PROD_KEYS = { name: "herald-keys" };
const KEDA_APIS = ["monitoring.coreos.com/v1", "keda.sh/v1alpha1"];

export const VALUE_SETS: Record<string, ValueSet> = {
  defaults: {
    releaseName: "herald",
    namespace: "default",
    existingSecrets: {},
    natsNamespace: "",
    natsMonitoringEndpoint: "",
    topologySpread: true,
    roles: allRoles,
  },
  minimal: {
    releaseName: "herald",
    namespace: "herald",
    valuesFiles: [deployValues("minimal.yaml")],
    existingSecrets: {},
    natsNamespace: "",
    natsMonitoringEndpoint: "",
    topologySpread: true,
    roles: allRoles,
  },
  "production-ha": {
    releaseName: "herald",
    namespace: "herald",
    valuesFiles: [deployValues("production-ha.yaml")],
    apiVersions: KEDA_APIS,
    existingSecrets: {
      DATABASE_URL: { ...PROD_INFRA, key: "DATABASE_URL" },
      NATS_URL: { ...PROD_INFRA, key: "NATS_URL" },
      REDIS_URL: { ...PROD_INFRA, key: "REDIS_URL" },
      HERALD_MASTER_KEY: { ...PROD_KEYS, key: "HERALD_MASTER_KEY" },
      HERALD_BOOTSTRAP_API_KEY: { ...PROD_KEYS, key: "HERALD_BOOTSTRAP_API_KEY" },
      HERALD_BOOTSTRAP_ADMIN_PASSWORD: { ...PROD_KEYS, key: "HERALD_BOOTSTRAP_ADMIN_PASSWORD" },
    },
    natsNamespace: "",
    natsMonitoringEndpoint: "nats-headless.nats.svc.cluster.local:8222",
    topologySpread: true,
    roles: allRoles,
  },
  "keda-all-senders": {
    releaseName: "push",
    namespace: "messaging",
    apiVersions: KEDA_APIS,
    values: {
      nats: { monitoringEndpoint: "nats.nats.svc:8222" },
      components: kedaOnAllSenders({ minReplicaCount: 1, maxReplicaCount: 8, lagThreshold: 8 }),
    },
    existingSecrets: {},
    natsNamespace: "",
    natsMonitoringEndpoint: "nats.nats.svc:8222",
    topologySpread: true,
    roles: allRoles,
  },
  "ingress-tls": {
    releaseName: "herald",
    namespace: "herald",
    values: {
      ingress: {
        enabled: true,
        className: "nginx",
        annotations: { "cert-manager.io/cluster-issuer": "letsencrypt" },
        hosts: [
          { host: "push.example.com", paths: [{ path: "/", pathType: "Prefix" }] },
          { host: "api.example.org", paths: [{ path: "/v1", pathType: "Prefix" }] },
        ],
        tls: [{ secretName: "push-tls", hosts: ["push.example.com", "api.example.org"] }],
      },
      components: { gateway: { replicas: 2 } },
    },
    existingSecrets: {},
    natsNamespace: "",
    natsMonitoringEndpoint: "",
    topologySpread: true,
    roles: allRoles,
  },
  "existing-secrets": {
    releaseName: "acme",
    namespace: "push",
    values: {
      postgresql: { existingSecret: "acme-pg", existingSecretKey: "uri" },
      nats: { existingSecret: "acme-nats", existingSecretKey: "url" },
      redis: { existingSecret: "acme-redis", existingSecretKey: "connection" },
      masterKey: {
        existingSecret: "acme-master",
        existingSecretKey: "key",
        version: 3,
        previous: { existingSecret: "acme-master", existingSecretKey: "retired" },
      },
      bootstrapApiKey: { enabled: true, existingSecret: "acme-bootstrap", existingSecretKey: "token" },
      bootstrapAdmin: { enabled: true, existingSecret: "acme-bootstrap", existingSecretKey: "admin-password" },
    },
    existingSecrets: {
      DATABASE_URL: { name: "acme-pg", key: "uri" },
      NATS_URL: { name: "acme-nats", key: "url" },
      REDIS_URL: { name: "acme-redis", key: "connection" },
      HERALD_MASTER_KEY: { name: "acme-master", key: "key" },
      HERALD_MASTER_KEYS_PREVIOUS: { name: "acme-master", key: "retired" },
      HERALD_BOOTSTRAP_API_KEY: { name: "acme-bootstrap", key: "token" },
      HERALD_BOOTSTRAP_ADMIN_PASSWORD: { name: "acme-bootstrap", key: "admin-password" },
    },
    natsNamespace: "",
    natsMonitoringEndpoint: "",
    topologySpread: true,
    roles: allRoles,
  },
  dev: {
    releaseName: "herald",
    namespace: "herald",
    valuesFiles: [deployValues("dev.yaml")],
    existingSecrets: {},
    natsNamespace: "dev",
    natsMonitoringEndpoint: "",
    topologySpread: false,
    roles: allRoles,
  },
  "dev-keda-netpol": {
    releaseName: "herald",
    namespace: "herald-dev",
    valuesFiles: [deployValues("dev.yaml")],
    apiVersions: KEDA_APIS,
    values: { components: kedaOnAllSenders({ minReplicaCount: 0 }), networkPolicy: { enabled: true } },
    existingSecrets: {},
    natsNamespace: "dev",
    // The bundled NATS' monitoring port, found by the chart itself.
    natsMonitoringEndpoint: "herald-nats.herald-dev.svc:8222",
    topologySpread: false,
    roles: allRoles,
  },
  "long-release-dev": {
    // The longest release name Helm accepts (53), with the bundled infrastructure on volumes.
    releaseName: "a-very-long-release-name-for-a-push-service-install-x",
    namespace: "herald",
    valuesFiles: [deployValues("dev.yaml")],
    values: { devInfra: { postgresql: { persistence: { enabled: true } }, nats: { persistence: { enabled: true } } } },
    existingSecrets: {},
    natsNamespace: "dev",
    natsMonitoringEndpoint: "",
    topologySpread: false,
    roles: allRoles,
  },
  "no-webpush": {
    releaseName: "herald",
    namespace: "herald",
    apiVersions: KEDA_APIS,
    values: {
      components: { senderWebpush: { enabled: false } },
      networkPolicy: { enabled: true },
      serviceMonitor: { enabled: true, namespace: "monitoring" },
    },
    existingSecrets: {},
    natsNamespace: "",
    natsMonitoringEndpoint: "",
    topologySpread: true,
    roles: allRoles.filter((r) => r !== "sender-webpush"),
  },
  "nats-namespace": {
    releaseName: "herald",
    namespace: "tenant-a",
    apiVersions: KEDA_APIS,
    values: {
      nats: { namespace: "tenant_a", monitoringEndpoint: "nats.nats.svc:8222" },
      components: kedaOnAllSenders({ minReplicaCount: 2, maxReplicaCount: 4 }),
    },
    existingSecrets: {},
    natsNamespace: "tenant_a",
    natsMonitoringEndpoint: "nats.nats.svc:8222",
    topologySpread: true,
    roles: allRoles,
  },
  "keda-webhooks": {
    // The webhooks component scaled by KEDA on its events backlog and, through Prometheus,
    // on its due deliveries; under a NATS namespace, so the names carry its prefix.
    releaseName: "hooks",
    namespace: "notify",
    apiVersions: KEDA_APIS,
    values: {
      nats: { namespace: "tenant_b", monitoringEndpoint: "nats.nats.svc:8222" },
      serviceMonitor: { enabled: true },
      components: {
        webhooks: {
          autoscaling: {
            keda: {
              enabled: true,
              minReplicaCount: 2,
              maxReplicaCount: 5,
              dueDeliveries: { serverAddress: "http://prometheus-operated.monitoring.svc:9090", threshold: 32 },
            },
          },
        },
      },
    },
    existingSecrets: {},
    natsNamespace: "tenant_b",
    natsMonitoringEndpoint: "nats.nats.svc:8222",
    topologySpread: true,
    roles: allRoles,
  },
};

/** Chart.yaml, as an object. */
export function chartMetadata(): { name: string; version: string; appVersion: string } {
  const [chart] = parseManifests(readFileSync(path.join(CHART_DIR, "Chart.yaml"), "utf8"));
  return chart as unknown as { name: string; version: string; appVersion: string };
}

// ---------------------------------------------------------------------------------------
// Schema validation of rendered objects
// ---------------------------------------------------------------------------------------

/** Custom resources: the model package of each apiVersion the chart may render. */
const CRD_MODELS: Record<string, string> = {
  "keda.sh/v1alpha1": "@kubernetes-models/keda/keda.sh/v1alpha1",
  "monitoring.coreos.com/v1": "@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1",
};

type ModelClass = (new (data: unknown) => { validate(): void }) & { apiVersion: string; kind: string };

async function modelClass(apiVersion: string, kind: string): Promise<ModelClass> {
  if (typeof apiVersion !== "string" || typeof kind !== "string" || !apiVersion || !kind) {
    throw new Error(`object without apiVersion/kind: ${JSON.stringify({ apiVersion, kind })}`);
  }
  // Built-in APIs: kubernetes-models/<group>/<version>, the core group as kubernetes-models/v1.
  const specifier = CRD_MODELS[apiVersion] ?? `kubernetes-models/${apiVersion}`;
  let mod: Record<string, unknown>;
  try {
    mod = (await import(specifier)) as Record<string, unknown>;
  } catch {
    throw new Error(`no schema for apiVersion ${apiVersion} (kind ${kind}): add its model package to the chart tests`);
  }
  const cls = mod[kind] as ModelClass | undefined;
  if (typeof cls !== "function" || cls.apiVersion !== apiVersion || cls.kind !== kind) {
    throw new Error(`no schema for ${apiVersion} ${kind}`);
  }
  return cls;
}

/**
 * Runs a model's generated validator on a copy of the object wrapped in proxies that
 * record every property the validator reads. The validators read each property their
 * schema defines (and iterate maps), so a property never read is one the schema does
 * not know: what Helm's OpenAPI validation and the API server's strict field validation
 * reject ("unknown field").
 */
function unknownFields(cls: ModelClass, obj: unknown): string[] {
  const root = JSON.parse(JSON.stringify(obj)) as unknown;
  const read = new WeakMap<object, Set<PropertyKey>>();
  const wrap = (v: unknown): unknown => {
    if (!v || typeof v !== "object") return v;
    const target = v as object;
    if (!read.has(target)) read.set(target, new Set());
    return new Proxy(target, {
      get(t, k, r) {
        read.get(t)!.add(k);
        return wrap(Reflect.get(t, k, r));
      },
      ownKeys(t) {
        const keys = Reflect.ownKeys(t);
        for (const k of keys) read.get(t)!.add(k);
        return keys;
      },
    });
  };
  (cls.prototype.validate as () => void).call(wrap(root));
  const unknown: string[] = [];
  const walk = (v: unknown, at: string) => {
    if (!v || typeof v !== "object") return;
    if (Array.isArray(v)) {
      for (const [i, x] of v.entries()) walk(x, `${at}[${i}]`);
      return;
    }
    const seen = read.get(v) ?? new Set();
    for (const [k, x] of Object.entries(v)) {
      if (seen.has(k)) walk(x, `${at}.${k}`);
      else unknown.push(`${at}.${k}`);
    }
  };
  walk(root, "");
  return unknown;
}

/**
 * Validates one rendered object against the schema of its apiVersion/kind: throws on a
 * schema error, an unknown field, or an apiVersion/kind without a schema.
 */
export async function validateObject(obj: K8sObject): Promise<void> {
  const cls = await modelClass(obj.apiVersion, obj.kind);
  const where = `${obj.kind} ${obj.metadata?.name}`;
  try {
    new cls(obj).validate();
  } catch (err) {
    throw new Error(`${where}: ${(err as Error).message}`);
  }
  const unknown = unknownFields(cls, obj);
  if (unknown.length > 0) throw new Error(`${where}: unknown fields ${unknown.join(", ")}`);
}

// ---------------------------------------------------------------------------------------
// Selectors and workloads
// ---------------------------------------------------------------------------------------

export type Labels = Record<string, string>;

/** Whether a matchLabels selector (no matchExpressions here) selects these labels. */
export function selects(selector: Labels | undefined, labels: Labels | undefined): boolean {
  if (!selector || Object.keys(selector).length === 0) return false;
  return Object.entries(selector).every(([k, v]) => labels?.[k] === v);
}

export const ofKind = (objs: K8sObject[], kind: string) => objs.filter((o) => o.kind === kind);

export function byName(objs: K8sObject[], kind: string, name: string): K8sObject | undefined {
  return objs.find((o) => o.kind === kind && o.metadata.name === name);
}

/** Deployments and StatefulSets: what a Service, PDB or policy can select. */
export const workloads = (objs: K8sObject[]) => objs.filter((o) => ["Deployment", "StatefulSet"].includes(o.kind));

export const podLabels = (w: K8sObject): Labels => w.spec.template.metadata.labels ?? {};

/** Herald's own Deployments (not the dev-only infrastructure). */
export const heraldDeployments = (objs: K8sObject[]) =>
  ofKind(objs, "Deployment").filter((d) => d.metadata.labels?.["herald/dev-infra"] !== "true");

export function mainContainer(w: K8sObject): any {
  const containers = w.spec.template.spec.containers as any[];
  if (containers.length !== 1)
    throw new Error(`${w.metadata.name}: expected one container, found ${containers.length}`);
  return containers[0];
}

export const roleOf = (d: K8sObject): RoleName => mainContainer(d).args?.[0] as RoleName;

/** A container port by name or number. */
export function containerPort(container: any, port: string | number): any {
  return (container.ports ?? []).find((p: any) => p.name === port || p.containerPort === port);
}

// ---------------------------------------------------------------------------------------
// What the code reads
// ---------------------------------------------------------------------------------------

type Spec = Record<string, EnvVar<unknown>>;

/** Each role's environment spec, as its process reads it (readEnv(configSpec, env)). */
export const ENV_SPECS: Record<RoleName, Spec> = {
  gateway: gatewaySpec as Spec,
  credential: credentialSpec as Spec,
  "device-registry": deviceRegistrySpec as Spec,
  campaign: campaignSpec as Spec,
  "sender-apns": senderApnsSpec as Spec,
  "sender-fcm": senderFcmSpec as Spec,
  "sender-webpush": senderWebpushSpec as Spec,
  webhooks: webhooksSpec as Spec,
};

/** Variables the chart may set although no config spec reads them (Node, OpenTelemetry, Downward API). */
export const EXTRA_ENV = /^(OTEL_[A-Z0-9_]+|POD_NAME|POD_NAMESPACE|NODE_NAME|NODE_OPTIONS|NODE_EXTRA_CA_CERTS)$/;

/** The variables that name another process, and the role they point at. */
export const SERVICE_URL_VARS: Record<string, RoleName> = {
  CREDENTIAL_URL: "credential",
  DEVICE_REGISTRY_URL: "device-registry",
  CAMPAIGN_URL: "campaign",
  WEBHOOKS_URL: "webhooks",
};

/** Infrastructure URL variables and the port the infrastructure listens on. */
export const INFRA_VARS: Record<string, number> = { DATABASE_URL: 5432, NATS_URL: 4222, REDIS_URL: 6379 };

/** The JetStream platform subject of each sender (its provider's `platform`). */
export const SENDER_PLATFORM: Partial<Record<RoleName, "ios" | "android" | "web">> = {
  "sender-apns": "ios", // services/sender-apns/src/apns-provider.ts
  "sender-fcm": "android", // services/sender-fcm/src/fcm-provider.ts
  "sender-webpush": "web", // services/sender-webpush/src/webpush-provider.ts
};

/** Every process gives up its graceful shutdown after this (packages/runtime/src/shutdown.ts). */
export const PROCESS_SHUTDOWN_CAP_S = 25;

export const specNames = (role: RoleName) => new Set(Object.values(ENV_SPECS[role]).map((v) => v.name));

/** Where a container's variable comes from. */
export type EnvSource =
  | { from: "value"; value: string }
  | { from: "configMap"; name: string; key: string; value: string | undefined }
  | { from: "secret"; name: string; key: string; value: string | undefined }
  | { from: "field"; path: string };

/**
 * A container's environment as Kubernetes assembles it: envFrom first, then env (which
 * wins), with the values of rendered ConfigMaps and Secrets (undefined when not rendered).
 */
export function containerEnv(objs: K8sObject[], container: any): Map<string, EnvSource> {
  const env = new Map<string, EnvSource>();
  const data = (kind: string, name: string): Record<string, string> | undefined => {
    const o = byName(objs, kind, name);
    if (!o) return undefined;
    const raw = (o.data ?? {}) as Record<string, string>;
    return kind === "Secret"
      ? Object.fromEntries(Object.entries(raw).map(([k, v]) => [k, Buffer.from(v, "base64").toString("utf8")]))
      : raw;
  };
  for (const from of container.envFrom ?? []) {
    const ref = from.configMapRef ?? from.secretRef;
    const kind = from.configMapRef ? "ConfigMap" : "Secret";
    const d = data(kind, ref.name);
    if (!d) throw new Error(`envFrom ${kind} ${ref.name} is not rendered`);
    for (const [k, v] of Object.entries(d)) {
      env.set(`${from.prefix ?? ""}${k}`, {
        from: kind === "ConfigMap" ? "configMap" : "secret",
        name: ref.name,
        key: k,
        value: v,
      });
    }
  }
  for (const e of container.env ?? []) {
    if ("value" in e) env.set(e.name, { from: "value", value: String(e.value) });
    else if (e.valueFrom?.secretKeyRef) {
      const r = e.valueFrom.secretKeyRef;
      env.set(e.name, { from: "secret", name: r.name, key: r.key, value: data("Secret", r.name)?.[r.key] });
    } else if (e.valueFrom?.configMapKeyRef) {
      const r = e.valueFrom.configMapKeyRef;
      env.set(e.name, { from: "configMap", name: r.name, key: r.key, value: data("ConfigMap", r.name)?.[r.key] });
    } else if (e.valueFrom?.fieldRef) env.set(e.name, { from: "field", path: e.valueFrom.fieldRef.fieldPath });
    else throw new Error(`env ${e.name}: unsupported source ${JSON.stringify(e)}`);
  }
  return env;
}

/** The value of a variable, when the rendered manifests hold it. */
export function envValue(env: Map<string, EnvSource>, name: string): string | undefined {
  const s = env.get(name);
  if (!s || s.from === "field") return undefined;
  return s.value;
}
