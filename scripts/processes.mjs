// The processes that make up a running Herald, in start order, with the environment
// that wires them together: used by `npm start` and `npm run dev` (scripts/start.mjs), the
// end-to-end tests and the bench, so all run exactly the same commands. `ports` names each process's ports; DEFAULT_PORTS are
// docs/design.md §6 Local ports.
export const DEFAULT_PORTS = {
  providerSim: 4443,
  providerSimAdmin: 4444,
  credential: 7003,
  credentialAdmin: 7103,
  deviceRegistry: 7001,
  deviceRegistryAdmin: 7101,
  campaign: 7002,
  campaignAdmin: 7102,
  senderApns: 7011,
  senderFcm: 7012,
  senderWebpush: 7013,
  webhooks: 7004,
  webhooksAdmin: 7104,
  gateway: 8080,
};

/**
 * Where the senders find Apple and Google: the simulator unless the environment names
 * the real (or another) service. FCM_TOKEN_URL follows FCM_URL: redirected only while
 * FCM goes to the simulator.
 */
export function providerUrls(ports = DEFAULT_PORTS, env = process.env) {
  const sim = `https://127.0.0.1:${ports.providerSim}`;
  const fcmSimulated = !env.FCM_URL;
  return {
    APNS_URL: env.APNS_URL || sim,
    FCM_URL: env.FCM_URL || sim,
    ...(fcmSimulated
      ? { FCM_TOKEN_URL: `${sim}/token` }
      : env.FCM_TOKEN_URL
        ? { FCM_TOKEN_URL: env.FCM_TOKEN_URL }
        : {}),
  };
}

/**
 * How dev mode and the tests run TypeScript sources: tsx, resolving the workspaces'
 * `herald-source` export condition to their src/ (production runs the built dist/).
 */
export const SOURCE_NODE_ARGS = ["--conditions=herald-source", "--import", "tsx"];

/**
 * V8's heap settings, the chart's defaults (`semiSpaceMiB`, `initialOldSpaceMiB` of each
 * component; chart tests keep them equal), with the measurements behind them in
 * docs/operations.md, "Memory":
 * - semiSpaceMb, each semi-space of the young generation: 4 instead of V8's 16, 20 to 110
 *   MB less resident memory per process under load for more scavenges; sender-webpush
 *   keeps 16, its CPU being its throughput (15 % less per message for ~25 MB).
 * - initialOldSpaceMb, below which the old generation is not collected (0: V8's sizing):
 *   64 for sender-webpush, whose 256 requests in flight are promoted and had V8 run a full
 *   collection every 200 ms (7 % less CPU per message for ~13 MB). A command-line flag,
 *   which NODE_OPTIONS may not carry. sender-apns gained more, for 20 to 27 MB that the
 *   stack's memory target counts.
 */
const HEAP = { semiSpaceMb: 4, initialOldSpaceMb: 0 };
const ROLE_HEAP = { "sender-webpush": { semiSpaceMb: 16, initialOldSpaceMb: 64 } };
const heapOf = (role) => ROLE_HEAP[role] ?? HEAP;

/** The old generation's limit in MB when no memory limit sizes it (the chart sizes it to the pod's). */
const OLD_SPACE_MB = 384;

/**
 * A Herald process's Node options. An old generation of at most 384 MB: on a machine with
 * memory to spare V8 allows 4 GB and lets the old generation grow to about four times its
 * live size before collecting it; under a pod's limit Node would size the heap itself,
 * but the chart's 512 Mi gives 259 MB, where V8 collects so often that a campaign ran a
 * fifth slower end to end (docs/operations.md, "Memory").
 */
export const nodeOptionsOf = (role) =>
  `--max-semi-space-size=${heapOf(role).semiSpaceMb} --max-old-space-size=${OLD_SPACE_MB}`;

/**
 * The image's NODE_OPTIONS, for every role (deploy/Dockerfile; a test keeps them equal): a
 * container's environment cannot depend on the role it runs, so `docker run` of
 * sender-webpush gets 4 MB semi-spaces too unless given NODE_OPTIONS; the chart sets each
 * component's own.
 */
export const HERALD_NODE_OPTIONS = nodeOptionsOf(undefined);

/** A role's V8 flags on node's command line, before the script (none for most roles). */
export const nodeFlagsOf = (role) => {
  const { initialOldSpaceMb } = heapOf(role);
  return initialOldSpaceMb > 0 ? [`--initial-old-space-size=${initialOldSpaceMb}`] : [];
};

/** The herald command as built: the bundle the image runs (scripts/bundle.mjs), and tsc's output it is made from. */
export const CLI_BUNDLE = "packages/cli/dist/main.js";
export const CLI_COMPILED = "packages/cli/build/main.js";

/**
 * A Herald role's process (see heraldProcesses), its node arguments from source (dev mode,
 * tests) and as built (`npm start`, the image, the bench).
 */
const role = (name, stage, health, env) => ({
  name,
  args: [...nodeFlagsOf(name), "packages/cli/src/main.ts", name],
  built: [...nodeFlagsOf(name), CLI_BUNDLE, name],
  stage,
  health,
  // 200 once its dependencies answer (packages/runtime/src/admin-server.ts; the gateway's own).
  ready: "/readyz",
  env,
});

/**
 * Process definitions: { name, args (node arguments after SOURCE_NODE_ARGS), built (node
 * arguments of the production build, paths relative to the repository or a staged
 * release), env, health (port of /healthz), ready (the path on that port that answers 200
 * once the process serves), stage }. Same stage: started together. Every Herald role goes
 * through the `herald` command, as in production; the simulator has its own entry.
 */
export function heraldProcesses(ports = DEFAULT_PORTS, providers = providerUrls(ports)) {
  const rpc = (port) => `http://127.0.0.1:${port}`;
  return [
    {
      name: "provider-sim",
      args: ["services/provider-sim/src/main.ts"],
      built: ["services/provider-sim/dist/main.js"],
      stage: 0,
      health: ports.providerSimAdmin,
      ready: "/healthz",
      env: { PORT: ports.providerSim, ADMIN_PORT: ports.providerSimAdmin },
    },
    role("credential", 0, ports.credentialAdmin, { PORT: ports.credential, ADMIN_PORT: ports.credentialAdmin }),
    role("device-registry", 0, ports.deviceRegistryAdmin, {
      PORT: ports.deviceRegistry,
      ADMIN_PORT: ports.deviceRegistryAdmin,
    }),
    role("campaign", 1, ports.campaignAdmin, {
      PORT: ports.campaign,
      ADMIN_PORT: ports.campaignAdmin,
      DEVICE_REGISTRY_URL: rpc(ports.deviceRegistry),
    }),
    role("sender-apns", 1, ports.senderApns, {
      ADMIN_PORT: ports.senderApns,
      CREDENTIAL_URL: rpc(ports.credential),
      APNS_URL: providers.APNS_URL,
    }),
    role("sender-fcm", 1, ports.senderFcm, {
      ADMIN_PORT: ports.senderFcm,
      CREDENTIAL_URL: rpc(ports.credential),
      FCM_URL: providers.FCM_URL,
      ...(providers.FCM_TOKEN_URL ? { FCM_TOKEN_URL: providers.FCM_TOKEN_URL } : {}),
    }),
    role("sender-webpush", 1, ports.senderWebpush, {
      ADMIN_PORT: ports.senderWebpush,
      CREDENTIAL_URL: rpc(ports.credential),
    }),
    role("webhooks", 1, ports.webhooksAdmin, { PORT: ports.webhooks, ADMIN_PORT: ports.webhooksAdmin }),
    role("gateway", 2, ports.gateway, {
      PORT: ports.gateway,
      CREDENTIAL_URL: rpc(ports.credential),
      DEVICE_REGISTRY_URL: rpc(ports.deviceRegistry),
      CAMPAIGN_URL: rpc(ports.campaign),
      WEBHOOKS_URL: rpc(ports.webhooks),
    }),
  ].map((p) => ({
    ...p,
    env: {
      NODE_OPTIONS: nodeOptionsOf(p.name),
      ...Object.fromEntries(Object.entries(p.env).map(([k, v]) => [k, String(v)])),
    },
  }));
}
