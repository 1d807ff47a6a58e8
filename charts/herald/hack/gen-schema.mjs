// Generates values.schema.json (JSON Schema draft-07) beside the chart's values.yaml:
//   node charts/herald/hack/gen-schema.mjs [OUT]
// (OUT: write elsewhere, e.g. to compare with the committed file; the chart tests do.)
// Edit the definitions here, not the JSON. Union types are written as anyOf, so that
// strict validators (ajv strict mode) accept the schema as well as Helm's gojsonschema.
import { spawnSync } from "node:child_process";
import { existsSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const ref = (n) => ({ $ref: `#/definitions/${n}` });
const nullable = (s) => ({ anyOf: [{ type: "null" }, s] });
const obj = (properties, extra = {}) => ({ type: "object", additionalProperties: false, properties, ...extra });
const int = (minimum, maximum, desc) => ({
  type: "integer",
  ...(minimum !== undefined ? { minimum } : {}),
  ...(maximum !== undefined ? { maximum } : {}),
  ...(desc ? { description: desc } : {}),
});
const intOrNull = (min, max, desc) => ({
  anyOf: [{ type: "null" }, int(min, max)],
  ...(desc ? { description: desc } : {}),
});
const str = (extra = {}) => ({ type: "string", ...extra });
const strOrNull = (extra = {}) => {
  const { description, ...rest } = extra;
  return { anyOf: [{ type: "null" }, { type: "string", ...rest }], ...(description ? { description } : {}) };
};
const bool = { type: "boolean" };

// A KEDA ScaledObject on a JetStream consumer's backlog (senders, webhooks): what differs
// is the least replica count, what the backlog counts, and any further settings.
const keda = (minReplicaCount, lagThreshold, extra = {}) =>
  obj({
    enabled: bool,
    minReplicaCount,
    maxReplicaCount: int(1),
    lagThreshold,
    activationLagThreshold: int(0),
    pollingInterval: int(1),
    cooldownPeriod: int(0),
    account: str({ minLength: 1 }),
    useHttps: bool,
    ...extra,
  });

const definitions = {
  port: int(1, 65535),
  logLevel: { type: "string", enum: ["fatal", "error", "warn", "info", "debug", "trace", "silent"] },
  stringMap: { type: "object", additionalProperties: { type: "string" } },
  envMap: {
    type: "object",
    propertyNames: { type: "string", pattern: "^[-._a-zA-Z][-._a-zA-Z0-9]*$" },
    additionalProperties: { anyOf: [{ type: "string" }, { type: "number" }, { type: "boolean" }, { type: "null" }] },
  },
  quantity: {
    anyOf: [
      { type: "string", pattern: "^[0-9.]+([eE][-+]?[0-9]+|[numkKMGTPE]i?)?$" },
      { type: "number", minimum: 0 },
    ],
  },
  resources: obj({
    limits: { type: "object", additionalProperties: ref("quantity") },
    requests: { type: "object", additionalProperties: ref("quantity") },
    claims: { type: "array", items: { type: "object" } },
  }),
  k8sObject: { type: "object", description: "A Kubernetes object, passed through as is." },
  k8sList: {
    type: "array",
    items: { type: "object" },
    description: "A list of Kubernetes objects, passed through as is.",
  },
  intOrPercent: {
    anyOf: [
      { type: "integer", minimum: 0 },
      { type: "string", pattern: "^[0-9]+%$" },
    ],
  },
  probe: obj({
    initialDelaySeconds: int(0),
    periodSeconds: int(1),
    timeoutSeconds: int(1),
    failureThreshold: int(1),
    successThreshold: int(1, 1, "Must be 1 for liveness and startup probes."),
  }),
  probes: obj({ startup: ref("probe"), liveness: ref("probe"), readiness: ref("probe") }),
  strategy: obj({ maxUnavailable: ref("intOrPercent"), maxSurge: ref("intOrPercent") }),
  pdb: obj({
    enabled: {
      ...bool,
      description: "Create a PodDisruptionBudget when the component's replicas (or autoscaling minimum) exceed 1.",
    },
    maxUnavailable: nullable(ref("intOrPercent")),
    minAvailable: nullable(ref("intOrPercent")),
  }),
  topologySpread: obj({
    enabled: bool,
    maxSkew: int(1),
    whenUnsatisfiable: { type: "string", enum: ["ScheduleAnyway", "DoNotSchedule"] },
    topologyKeys: { type: "array", items: str({ minLength: 1 }) },
  }),
  service: obj({
    type: { type: "string", enum: ["ClusterIP", "NodePort", "LoadBalancer"] },
    nodePort: nullable(ref("port")),
    annotations: ref("stringMap"),
    labels: ref("stringMap"),
  }),
  hpa: obj({
    enabled: bool,
    minReplicas: int(1),
    maxReplicas: int(1),
    targetCPUUtilizationPercentage: intOrNull(1, 1000),
    targetMemoryUtilizationPercentage: intOrNull(1, 1000),
    behavior: ref("k8sObject"),
  }),
  keda: keda(int(0), int(1, undefined, "Target backlog (pending + ack-pending delivery batches) per replica.")),
  kedaWebhooks: keda(
    int(1, undefined, "At least 1: webhooks also serves the endpoints API."),
    int(1, undefined, "Target backlog (pending + ack-pending webhook events) per replica."),
    {
      dueDeliveries: obj({
        serverAddress: str({
          pattern: "^(|https?://\\S+)$",
          description: "Prometheus server of the trigger on herald_webhook_due_deliveries; empty: no such trigger.",
        }),
        threshold: int(1, undefined, "Target due deliveries per replica."),
        activationThreshold: int(0),
        query: str({ description: "PromQL; empty: the chart's query of herald_webhook_due_deliveries." }),
      }),
    },
  ),
  sizeLimit: { type: "string", pattern: "^[0-9]+([numkKMGTPE]i?)?$" },
  peers: { type: "array", items: { type: "object" }, description: "NetworkPolicyPeer list." },
  netpolPorts: {
    type: "array",
    items: obj({
      port: {
        anyOf: [
          { type: "integer", minimum: 1, maximum: 65535 },
          { type: "string", minLength: 1 },
        ],
      },
      endPort: int(1, 65535),
      protocol: { type: "string", enum: ["TCP", "UDP", "SCTP"] },
    }),
  },
  egressRule: obj({ to: ref("peers"), ports: ref("netpolPorts") }),
  infraImage: obj({
    repository: str({ minLength: 1 }),
    tag: str({ minLength: 1 }),
    pullPolicy: { type: "string", enum: ["Always", "IfNotPresent", "Never"] },
  }),
  persistence: obj({ enabled: bool, size: ref("sizeLimit"), storageClass: str() }),
};

// Pod and rollout settings a component inherits from `defaults` (nullable in a component).
const inheritable = {
  replicas: int(0),
  logLevel: ref("logLevel"),
  resources: ref("resources"),
  podAnnotations: ref("stringMap"),
  podLabels: ref("stringMap"),
  nodeSelector: ref("stringMap"),
  tolerations: ref("k8sList"),
  affinity: ref("k8sObject"),
  priorityClassName: str(),
  terminationGracePeriodSeconds: int(0),
  preStopSleepSeconds: int(0, 300),
  strategy: ref("strategy"),
  pdb: ref("pdb"),
  topologySpread: ref("topologySpread"),
  podSecurityContext: ref("k8sObject"),
  securityContext: ref("k8sObject"),
  probes: ref("probes"),
  tmpSizeLimit: ref("sizeLimit"),
  extraVolumes: ref("k8sList"),
  extraVolumeMounts: ref("k8sList"),
};

const httpsOrigin = "^(|https://[^/?#\\s]+/?)$";
const httpsBase = "^(|https://[^?#\\s]+)$";
const senderConfig = {
  concurrentBatches: intOrNull(1, 1000, "SENDER_CONCURRENT_BATCHES"),
  maxInFlight: intOrNull(1, 100000, "SENDER_MAX_IN_FLIGHT"),
  retryMaxAttempts: intOrNull(1, 100, "SENDER_RETRY_MAX_ATTEMPTS"),
  retryBaseMs: intOrNull(1, 600000, "SENDER_RETRY_BASE_MS"),
  retryMaxDelayMs: intOrNull(1, 3600000, "SENDER_RETRY_MAX_DELAY_MS"),
  retryMaxElapsedMs: intOrNull(1, 3600000, "SENDER_RETRY_MAX_ELAPSED_MS"),
  ackWaitMs: intOrNull(1000, 3600000, "SENDER_ACK_WAIT_MS"),
  drainMs: intOrNull(0, 3600000, "SENDER_DRAIN_MS"),
};
const dbSchema = strOrNull({
  pattern: "^([A-Za-z_][A-Za-z0-9_]*)?$",
  description: "DB_SCHEMA; empty: the service's default schema.",
});
const configs = {
  gateway: {
    rateLimitPerMinute: intOrNull(1, 1000000, "HERALD_RATE_LIMIT_PER_MINUTE"),
    corsOrigins: {
      description: 'HERALD_CORS_ORIGINS: "*", a comma-separated string, or a list of origins.',
      anyOf: [
        { type: "null" },
        { type: "string", minLength: 1 },
        { type: "array", minItems: 1, items: { type: "string", pattern: "^https?://[^/\\s]+$" } },
      ],
    },
    bodyLimitBytes: intOrNull(1024, 67108864, "HERALD_BODY_LIMIT_BYTES"),
    authCacheMs: intOrNull(0, 300000, "HERALD_AUTH_CACHE_MS"),
    jwtIssuer: strOrNull({ description: "HERALD_JWT_ISSUER" }),
    jwtJwksUrl: strOrNull({ pattern: "^(|https?://\\S+)$", description: "HERALD_JWT_JWKS_URL" }),
    jwtAudience: strOrNull({ description: "HERALD_JWT_AUDIENCE" }),
    publicUrl: strOrNull({ pattern: "^(|https?://[^/\\s]+)$", description: "HERALD_PUBLIC_URL" }),
    trustProxy: { anyOf: [{ type: "null" }, bool], description: "HERALD_TRUST_PROXY" },
    accessTokenTtlSeconds: intOrNull(60, 3600, "HERALD_ACCESS_TOKEN_TTL_SECONDS"),
  },
  credential: {
    dbSchema,
    defaultRateLimit: intOrNull(1, 1000000, "HERALD_DEFAULT_RATE_LIMIT"),
    clientKeyRateLimit: intOrNull(1, 1000000, "HERALD_CLIENT_KEY_RATE_LIMIT"),
    signingKeyRotationDays: intOrNull(1, 3650, "HERALD_SIGNING_KEY_ROTATION_DAYS"),
    signingKeyRetentionHours: intOrNull(2, 8760, "HERALD_SIGNING_KEY_RETENTION_HOURS"),
  },
  deviceRegistry: { dbSchema },
  campaign: {
    dbSchema,
    fanoutPageSize: intOrNull(1, 5000, "FANOUT_PAGE_SIZE"),
    fanoutBatchSize: intOrNull(1, 5000, "FANOUT_BATCH_SIZE"),
    fanoutConcurrency: intOrNull(1, 64, "FANOUT_CONCURRENCY"),
    fanoutLeaseMs: intOrNull(1000, 3600000, "FANOUT_LEASE_MS"),
    schedulerIntervalMs: intOrNull(10, 3600000, "SCHEDULER_INTERVAL_MS"),
    receiptRetentionDays: intOrNull(1, 3650, "HERALD_RECEIPT_RETENTION_DAYS"),
  },
  webhooks: {
    dbSchema,
    allowPrivate: { anyOf: [{ type: "null" }, bool], description: "HERALD_WEBHOOK_ALLOW_PRIVATE: dev only." },
    concurrency: intOrNull(1, 1000, "HERALD_WEBHOOK_CONCURRENCY"),
    timeoutMs: intOrNull(100, 60000, "HERALD_WEBHOOK_TIMEOUT_MS"),
  },
  senderApns: {
    ...senderConfig,
    apnsUrl: strOrNull({ pattern: httpsOrigin, description: "APNS_URL: an https origin; empty: Apple's hosts." }),
    apnsMaxConnections: intOrNull(1, 100, "APNS_MAX_CONNECTIONS"),
    apnsMaxQueued: intOrNull(1, 1000000, "APNS_MAX_QUEUED"),
    apnsTokenRefreshMinutes: intOrNull(20, 59, "APNS_TOKEN_REFRESH_MINUTES"),
    apnsRequestTimeoutMs: intOrNull(100, 600000, "APNS_REQUEST_TIMEOUT_MS"),
    apnsIdleTimeoutMs: intOrNull(1000, 3600000, "APNS_IDLE_TIMEOUT_MS"),
  },
  senderFcm: {
    ...senderConfig,
    fcmUrl: strOrNull({
      pattern: httpsBase,
      description: "FCM_URL: https base URL; empty: https://fcm.googleapis.com.",
    }),
    fcmTokenUrl: strOrNull({
      pattern: httpsBase,
      description: "FCM_TOKEN_URL: OAuth token endpoint override; empty: the service account's token_uri.",
    }),
    fcmRateLimitPerMinute: intOrNull(1, 100000000, "FCM_RATE_LIMIT_PER_MINUTE"),
    fcmRateWindowMs: intOrNull(100, 60000, "FCM_RATE_WINDOW_MS"),
    fcmMaxConnections: intOrNull(1, 100, "FCM_MAX_CONNECTIONS"),
  },
  senderWebpush: {
    ...senderConfig,
    encryptThreads: intOrNull(0, 64, "WEBPUSH_ENCRYPT_THREADS"),
    webpushMaxConnections: intOrNull(1, 100, "WEBPUSH_MAX_CONNECTIONS"),
  },
};

const kinds = {
  gateway: "gateway",
  credential: "service",
  deviceRegistry: "service",
  campaign: "service",
  webhooks: "service",
  senderApns: "sender",
  senderFcm: "sender",
  senderWebpush: "sender",
};
const orNull = (s) => nullable(s);

function component(key) {
  const kind = kinds[key];
  const props = {
    enabled: bool,
    replicas: orNull(int(0)),
    ...(kind !== "sender" ? { port: ref("port") } : {}),
    ...(kind !== "gateway" ? { adminPort: ref("port") } : {}),
    logLevel: nullable(ref("logLevel")),
    semiSpaceMiB: int(1, 256, "--max-semi-space-size (MiB) in the NODE_OPTIONS the chart derives"),
    initialOldSpaceMiB: int(0, 65536, "--initial-old-space-size (MiB) on node's command line; 0: V8's own sizing"),
    config: obj(configs[key]),
    env: ref("envMap"),
    extraEnv: nullable(ref("k8sList")),
    resources: nullable(ref("resources")),
    service: ref("service"),
    autoscaling: obj(
      kind === "sender"
        ? { hpa: ref("hpa"), keda: ref("keda") }
        : key === "webhooks"
          ? { hpa: ref("hpa"), keda: ref("kedaWebhooks") }
          : { hpa: ref("hpa") },
    ),
  };
  for (const [k, s] of Object.entries(inheritable)) if (!(k in props)) props[k] = orNull(s);
  definitions[`component_${key}`] = obj(props);
  return ref(`component_${key}`);
}

const components = {};
for (const key of Object.keys(kinds)) components[key] = component(key);

const schema = {
  $schema: "http://json-schema.org/draft-07/schema#",
  title: "Herald Helm chart values",
  type: "object",
  additionalProperties: false,
  properties: {
    global: { type: "object", description: "Helm's global values (unused by this chart)." },
    nameOverride: str(),
    fullnameOverride: str(),
    commonLabels: ref("stringMap"),
    image: obj({
      repository: str({ minLength: 1 }),
      tag: str({ description: "Empty: the chart's appVersion." }),
      digest: str({ pattern: "^(|sha256:[a-f0-9]{64})$" }),
      pullPolicy: { type: "string", enum: ["Always", "IfNotPresent", "Never"] },
    }),
    imagePullSecrets: { type: "array", items: obj({ name: str({ minLength: 1 }) }, { required: ["name"] }) },
    serviceAccount: obj({ create: bool, name: str(), annotations: ref("stringMap") }),
    env: ref("envMap"),
    postgresql: obj({
      url: str({ pattern: "^(|postgres(ql)?://\\S+)$", description: "DATABASE_URL" }),
      existingSecret: str(),
      existingSecretKey: str({ minLength: 1 }),
    }),
    nats: obj({
      url: str({ description: "NATS_URL (comma-separated list allowed)" }),
      existingSecret: str(),
      existingSecretKey: str({ minLength: 1 }),
      namespace: str({ pattern: "^[A-Za-z0-9_-]*$", description: "NATS_NAMESPACE" }),
      monitoringEndpoint: str({
        pattern: "^(|[^/\\s:]+(:[0-9]{1,5})?)$",
        description: "host:port of the NATS monitoring endpoint (KEDA).",
      }),
      streamReplicas: int(1, 5, "NATS_STREAM_REPLICAS: replicas of every stream (1 on one server, 3 on a cluster)."),
      placementTags: {
        type: "array",
        items: str({ pattern: "^[^,\\s]+$" }),
        description: "NATS_STREAM_PLACEMENT_TAGS: server tags every stream's replicas are placed on.",
      },
    }),
    redis: obj({
      url: str({ pattern: "^(|rediss?://\\S+)$", description: "REDIS_URL" }),
      existingSecret: str(),
      existingSecretKey: str({ minLength: 1 }),
      keyPrefix: str({ description: "REDIS_KEY_PREFIX" }),
    }),
    masterKey: obj({
      value: str(),
      existingSecret: str({ description: "Name of an existing Secret holding the value (instead of value)." }),
      existingSecretKey: str({ minLength: 1 }),
      version: int(
        1,
        32767,
        "HERALD_MASTER_KEY_VERSION: the version of the active key; a new key needs a new version.",
      ),
      previous: obj({
        keys: {
          type: "array",
          description:
            "HERALD_MASTER_KEYS_PREVIOUS: keys that decrypt but never encrypt (retired ones; the next one while it is staged).",
          items: obj(
            {
              version: int(1, 32767),
              value: str({ pattern: "^[A-Za-z0-9+/]{43}=$", description: "32 random bytes, base64." }),
            },
            { required: ["version", "value"] },
          ),
        },
        existingSecret: str({
          description: 'Name of an existing Secret whose key holds "<version>:<base64 key>,…" (instead of keys).',
        }),
        existingSecretKey: str({ minLength: 1 }),
      }),
    }),
    bootstrapApiKey: obj({
      enabled: bool,
      value: str({ pattern: "^(|hk_live_[A-Za-z0-9]{32,256})$" }),
      existingSecret: str(),
      existingSecretKey: str({ minLength: 1 }),
    }),
    bootstrapAdmin: obj({
      enabled: bool,
      email: str({ pattern: "^[^@\\s]+@[^@\\s]+$" }),
      password: str({ maxLength: 256 }),
      existingSecret: str(),
      existingSecretKey: str({ minLength: 1 }),
    }),
    webPush: obj({ allowPrivate: bool, allowedHosts: { type: "array", items: str({ pattern: "^[^,\\s]+$" }) } }),
    defaults: obj(inheritable),
    components: obj(components),
    ingress: obj({
      enabled: bool,
      className: str(),
      annotations: ref("stringMap"),
      hosts: {
        type: "array",
        items: obj({
          host: str(),
          paths: {
            type: "array",
            items: obj({
              path: str({ pattern: "^/" }),
              pathType: { type: "string", enum: ["Prefix", "Exact", "ImplementationSpecific"] },
            }),
          },
        }),
      },
      tls: { type: "array", items: obj({ secretName: str(), hosts: { type: "array", items: str() } }) },
    }),
    serviceMonitor: obj({
      enabled: bool,
      namespace: str(),
      labels: ref("stringMap"),
      interval: str({ pattern: "^(|[0-9]+(ms|s|m|h))$" }),
      scrapeTimeout: str({ pattern: "^(|[0-9]+(ms|s|m|h))$" }),
      relabelings: ref("k8sList"),
      metricRelabelings: ref("k8sList"),
    }),
    prometheusRule: obj({
      enabled: bool,
      namespace: str(),
      labels: ref("stringMap"),
      thresholds: obj({
        backlogBatches: int(1),
        providerErrorRatio: { type: "number", exclusiveMinimum: 0, maximum: 1 },
        apiErrorRatio: { type: "number", exclusiveMinimum: 0, maximum: 1 },
        outboxAgeSeconds: int(1),
      }),
    }),
    grafanaDashboard: obj({
      enabled: bool,
      namespace: str(),
      labels: ref("stringMap"),
      annotations: ref("stringMap"),
    }),
    networkPolicy: obj({
      enabled: bool,
      gateway: obj({ from: ref("peers") }),
      metrics: obj({ from: ref("peers") }),
      egress: obj({
        allowAll: bool,
        dns: ref("egressRule"),
        postgresql: ref("egressRule"),
        nats: ref("egressRule"),
        redis: ref("egressRule"),
        senders: ref("egressRule"),
        webhooks: ref("egressRule"),
        jwks: ref("egressRule"),
        extra: ref("k8sList"),
      }),
    }),
    devInfra: obj({
      enabled: bool,
      postgresql: obj({
        enabled: bool,
        image: ref("infraImage"),
        database: str({ pattern: "^[A-Za-z_][A-Za-z0-9_]*$" }),
        resources: ref("resources"),
        persistence: ref("persistence"),
      }),
      nats: obj({
        enabled: bool,
        image: ref("infraImage"),
        resources: ref("resources"),
        persistence: ref("persistence"),
      }),
      redis: obj({ enabled: bool, image: ref("infraImage"), resources: ref("resources") }),
    }),
  },
  definitions,
};

// The repository's formatter has the last word on layout (short arrays on one line). It
// formats the text as the committed file's (through stdin, with the repository's
// biome.json), so that the output is the same wherever it is written: a file outside the
// repository would get biome's defaults, or none at all.
const root = fileURLToPath(new URL("../../../", import.meta.url));
const committed = fileURLToPath(new URL("../values.schema.json", import.meta.url));
const out = process.argv[2] ?? committed;
const biome = path.join(root, "node_modules/.bin/biome");
if (!existsSync(biome)) {
  console.error(`gen-schema: ${biome} is missing: run npm ci first`);
  process.exit(1);
}
const formatted = spawnSync(biome, ["format", `--stdin-file-path=${path.relative(root, committed)}`], {
  cwd: root,
  input: `${JSON.stringify(schema, null, 2)}\n`,
  encoding: "utf8",
});
if (formatted.status !== 0 || !formatted.stdout) {
  console.error(`gen-schema: biome format failed (exit ${formatted.status}):\n${formatted.stderr}`);
  process.exit(1);
}
writeFileSync(out, formatted.stdout);
