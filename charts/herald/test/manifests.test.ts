import { readEnv, streamNames } from "@herald/runtime";
import { Gauge, Registry } from "prom-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ROLE_NAMES, type RoleName } from "../../../packages/cli/src/roles.js";
import { nodeFlagsOf, nodeOptionsOf } from "../../../scripts/processes.mjs";
import { configSpec as credentialConfigSpec, sealedBoxOf } from "../../../services/credential/src/config.js";
import { WEBHOOK_EVENTS_DURABLE } from "../../../services/webhooks/src/event-consumer.js";
import { createWebhookMetrics } from "../../../services/webhooks/src/metrics.js";
import {
  ENV_SPECS,
  EXTRA_ENV,
  INFRA_VARS,
  type K8sObject,
  PROCESS_SHUTDOWN_CAP_S,
  SENDER_PLATFORM,
  SERVICE_URL_VARS,
  VALUE_SETS,
  byName,
  chartMetadata,
  containerEnv,
  containerPort,
  envValue,
  heraldDeployments,
  mainContainer,
  ofKind,
  podLabels,
  removeTempFiles,
  render,
  renderFailure,
  renderText,
  renderer,
  roleOf,
  selects,
  specNames,
  validateObject,
  workloads,
} from "./chart-support.js";

// The chart rendered with each value set of VALUE_SETS (once, shared by the tests), every
// object checked against its Kubernetes schema, and the properties that make the objects
// work together and with the code: probes on the ports the processes serve, selectors
// that select, references that resolve, the variables each process reads, the JetStream
// names KEDA watches, the network paths the processes use.

const SETS = Object.keys(VALUE_SETS);
const rendered: Record<string, K8sObject[]> = {};
const objectsOf = (set: string): K8sObject[] => {
  const objs = rendered[set];
  if (!objs) throw new Error(`value set ${set} was not rendered`);
  return objs;
};

beforeAll(async () => {
  await renderer();
  await Promise.all(
    SETS.map(async (name) => {
      rendered[name] = await render(VALUE_SETS[name]!);
    }),
  );
});
afterAll(removeTempFiles);

/** Runs a check on every Herald Deployment of a value set; a failure names the Deployment. */
const eachDeployment = (set: string, check: (d: K8sObject) => void) => {
  const deployments = heraldDeployments(objectsOf(set));
  expect(deployments.length).toBeGreaterThan(0);
  for (const d of deployments) {
    try {
      check(d);
    } catch (err) {
      if (err instanceof Error) err.message = `Deployment ${d.metadata.name}: ${err.message}`;
      throw err;
    }
  }
};

const preStopSeconds = (container: any): number => {
  const cmd = container.lifecycle?.preStop?.exec?.command as string[] | undefined;
  if (!cmd) return 0;
  expect(cmd[0]).toBe("sleep");
  return Number(cmd[1]);
};

const RESTRICTED_CAPS = ["ALL"];

describe("rendered objects", () => {
  const EXPECTED_KINDS: Record<string, Record<string, number>> = {
    defaults: { ServiceAccount: 1, Secret: 2, ConfigMap: 8, Service: 8, Deployment: 8 },
    minimal: { ServiceAccount: 1, Secret: 2, ConfigMap: 8, Service: 8, Deployment: 8 },
    "production-ha": {
      ServiceAccount: 1,
      ConfigMap: 9,
      PrometheusRule: 1,
      Service: 8,
      Deployment: 8,
      HorizontalPodAutoscaler: 1,
      ScaledObject: 3,
      PodDisruptionBudget: 8,
      Ingress: 1,
      ServiceMonitor: 8,
      NetworkPolicy: 8,
    },
    "keda-all-senders": { ServiceAccount: 1, Secret: 2, ConfigMap: 8, Service: 8, Deployment: 8, ScaledObject: 3 },
    "ingress-tls": {
      ServiceAccount: 1,
      Secret: 2,
      ConfigMap: 8,
      Service: 8,
      Deployment: 8,
      Ingress: 1,
      PodDisruptionBudget: 1,
    },
    "existing-secrets": { ServiceAccount: 1, ConfigMap: 8, Service: 8, Deployment: 8 },
    dev: { ServiceAccount: 1, Secret: 2, ConfigMap: 8, Service: 11, Deployment: 9, StatefulSet: 2 },
    "dev-keda-netpol": {
      ServiceAccount: 1,
      Secret: 2,
      ConfigMap: 8,
      Service: 11,
      Deployment: 9,
      StatefulSet: 2,
      ScaledObject: 3,
      NetworkPolicy: 8,
    },
    "long-release-dev": { ServiceAccount: 1, Secret: 2, ConfigMap: 8, Service: 11, Deployment: 9, StatefulSet: 2 },
    "no-webpush": {
      ServiceAccount: 1,
      Secret: 2,
      ConfigMap: 7,
      Service: 7,
      Deployment: 7,
      NetworkPolicy: 7,
      ServiceMonitor: 7,
    },
    "nats-namespace": {
      ServiceAccount: 1,
      Secret: 2,
      ConfigMap: 8,
      Service: 8,
      Deployment: 8,
      ScaledObject: 3,
      PodDisruptionBudget: 3,
    },
    "keda-webhooks": {
      ServiceAccount: 1,
      Secret: 2,
      ConfigMap: 8,
      Service: 8,
      Deployment: 8,
      ScaledObject: 1,
      PodDisruptionBudget: 1,
      ServiceMonitor: 8,
    },
  };

  it("covers every value set", () => {
    expect(Object.keys(EXPECTED_KINDS).sort()).toEqual([...SETS].sort());
  });

  it.each(SETS)("%s: renders the expected kinds and counts of objects, with unique names", (set) => {
    const objs = objectsOf(set);
    const counts: Record<string, number> = {};
    for (const o of objs) counts[o.kind] = (counts[o.kind] ?? 0) + 1;
    expect(counts).toEqual(EXPECTED_KINDS[set]);
    const ids = objs.map((o) => `${o.kind}/${o.metadata.namespace}/${o.metadata.name}`);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it.each(SETS)(
    "%s: every object validates against the schema of its apiVersion/kind, with no unknown field",
    async (set) => {
      const objs = objectsOf(set);
      expect(objs.length).toBeGreaterThan(0);
      const errors: string[] = [];
      for (const o of objs) await validateObject(o).catch((err: Error) => errors.push(err.message));
      expect(errors).toEqual([]);
    },
  );

  it("every object of the release is in the release namespace (ServiceMonitors: where configured)", () => {
    for (const set of SETS) {
      for (const o of objectsOf(set)) {
        const expected =
          o.kind === "ServiceMonitor" && set === "no-webpush" ? "monitoring" : VALUE_SETS[set]!.namespace;
        expect(o.metadata.namespace, `${set} ${o.kind} ${o.metadata.name}`).toBe(expected);
      }
    }
  });

  it.each(SETS)("%s: names and label values are valid, even for the longest release name", (set) => {
    const dns1123Label = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
    const dns1035Label = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;
    const labelValue = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;
    for (const o of objectsOf(set)) {
      const name = o.metadata.name;
      const where = `${o.kind} ${name}`;
      expect(name.split(".").every((part) => dns1123Label.test(part)) && name.length <= 253, where).toBe(true);
      // Service names are DNS labels; other names become label values or hostnames.
      if (o.kind === "Service") expect(dns1035Label.test(name) && name.length <= 63, where).toBe(true);
      else expect(name.length, where).toBeLessThanOrEqual(o.kind === "Secret" ? 253 : 63);
      // A StatefulSet's pods carry controller-revision-hash=<name>-<10 characters>.
      if (o.kind === "StatefulSet") expect(name.length, where).toBeLessThanOrEqual(52);
      const metas = [o.metadata, ...(o.spec?.template ? [o.spec.template.metadata] : [])];
      for (const m of metas) {
        for (const [k, v] of Object.entries((m.labels ?? {}) as Record<string, string>)) {
          expect(typeof v === "string" && v.length <= 63 && labelValue.test(v), `${where}: label ${k}=${v}`).toBe(true);
        }
      }
    }
  });

  it("the validator refuses unknown apiVersions and kinds, schema errors and unknown fields", async () => {
    const deployment = structuredClone(heraldDeployments(objectsOf("defaults"))[0]!);
    await expect(validateObject(deployment)).resolves.toBeUndefined();
    await expect(validateObject({ ...deployment, apiVersion: "example.com/v1", kind: "Widget" })).rejects.toThrow(
      /no schema for apiVersion example.com\/v1/,
    );
    await expect(validateObject({ ...deployment, kind: "Deploymnet" })).rejects.toThrow(
      /no schema for apps\/v1 Deploymnet/,
    );
    await expect(validateObject({ ...deployment, apiVersion: "apps/v1beta9" })).rejects.toThrow(/no schema/);
    const badPort = structuredClone(deployment);
    badPort.spec.template.spec.containers[0].ports[0].containerPort = "8080";
    await expect(validateObject(badPort)).rejects.toThrow(/containerPort must be integer/);
    const unknownField = structuredClone(deployment);
    unknownField.spec.template.spec.containers[0].readinessProbe.httpGet.paht = "/readyz";
    await expect(validateObject(unknownField)).rejects.toThrow(
      /unknown fields \.spec\.template\.spec\.containers\[0\]\.readinessProbe\.httpGet\.paht/,
    );
    const scaledObject = structuredClone(ofKind(objectsOf("production-ha"), "ScaledObject")[0]!);
    await expect(validateObject(scaledObject)).resolves.toBeUndefined();
    scaledObject.spec.triggers[0].metdata = {};
    await expect(validateObject(scaledObject)).rejects.toThrow(/unknown fields \.spec\.triggers\[0\]\.metdata/);
  });

  it("every object and pod template carries the app.kubernetes.io labels of the release", () => {
    const { name, version } = chartMetadata();
    for (const set of SETS) {
      const { releaseName } = VALUE_SETS[set]!;
      const objs = objectsOf(set);
      const templates = workloads(objs).map((w) => ({
        ...w,
        kind: `${w.kind} pod template`,
        metadata: w.spec.template.metadata,
      }));
      for (const o of [...objs, ...templates]) {
        const labels = o.metadata.labels ?? {};
        const where = `${set} ${o.kind} ${o.metadata.name ?? ""}`;
        expect(labels["app.kubernetes.io/name"], where).toBe(name);
        expect(labels["app.kubernetes.io/instance"], where).toBe(releaseName);
        expect(labels["app.kubernetes.io/component"], where).toMatch(/^[a-z][-a-z]*$/);
        expect(labels["app.kubernetes.io/part-of"], where).toBe("herald");
        expect(labels["app.kubernetes.io/managed-by"], where).toBe("Helm");
        expect(labels["app.kubernetes.io/version"], where).toMatch(/^[A-Za-z0-9][-A-Za-z0-9_.]*$/);
        expect(labels["helm.sh/chart"], where).toBe(`${name}-${version}`);
      }
    }
  });
});

describe("Deployments", () => {
  it.each(SETS)(
    "%s: one Deployment per enabled role, running `node [V8 flags] /app/packages/cli/dist/main.js <role>`",
    (set) => {
      const deployments = heraldDeployments(objectsOf(set));
      const roles = deployments.map((d) => {
        const c = mainContainer(d);
        const role = roleOf(d);
        // The V8 flags NODE_OPTIONS may not carry: dev mode's (scripts/processes.mjs).
        expect(c.command, d.metadata.name).toEqual(["node", ...nodeFlagsOf(role), "/app/packages/cli/dist/main.js"]);
        expect(c.args, d.metadata.name).toHaveLength(1);
        expect(ROLE_NAMES, d.metadata.name).toContain(role);
        expect(c.name).toBe(role);
        expect(d.metadata.labels["app.kubernetes.io/component"]).toBe(role);
        expect(podLabels(d)["app.kubernetes.io/component"]).toBe(role);
        return role;
      });
      expect([...roles].sort()).toEqual([...VALUE_SETS[set]!.roles].sort());
    },
  );

  it.each(SETS)(
    "%s: liveness and startup on /healthz, readiness on /readyz, on the port the process serves them",
    (set) =>
      eachDeployment(set, (d) => {
        const c = mainContainer(d);
        const env = containerEnv(objectsOf(set), c);
        // The gateway serves its health endpoints on PORT, the others on ADMIN_PORT.
        const healthPort = Number(envValue(env, roleOf(d) === "gateway" ? "PORT" : "ADMIN_PORT"));
        expect(healthPort).toBeGreaterThan(0);
        for (const [probe, path] of [
          ["livenessProbe", "/healthz"],
          ["startupProbe", "/healthz"],
          ["readinessProbe", "/readyz"],
        ] as const) {
          const p = c[probe];
          expect(p?.httpGet?.path, probe).toBe(path);
          const port = containerPort(c, p.httpGet.port);
          expect(port, `${probe} port ${p.httpGet.port} is a declared container port`).toBeDefined();
          expect(port.containerPort, probe).toBe(healthPort);
          expect(p.periodSeconds, probe).toBeGreaterThan(0);
          expect(p.failureThreshold, probe).toBeGreaterThan(0);
        }
        // Startup may take migrations: the budget of the startup probe is at least a minute.
        expect(c.startupProbe.periodSeconds * c.startupProbe.failureThreshold).toBeGreaterThanOrEqual(60);
      }),
  );

  it.each(SETS)("%s: the container ports are the ports the process listens on", (set) =>
    eachDeployment(set, (d) => {
      const c = mainContainer(d);
      const env = containerEnv(objectsOf(set), c);
      const role = roleOf(d);
      const expected: Record<string, string | undefined> =
        role === "gateway"
          ? { http: envValue(env, "PORT") }
          : role.startsWith("sender-")
            ? { admin: envValue(env, "ADMIN_PORT") }
            : { grpc: envValue(env, "PORT"), admin: envValue(env, "ADMIN_PORT") };
      const ports = Object.fromEntries((c.ports as any[]).map((p) => [p.name, String(p.containerPort)]));
      expect(ports, d.metadata.name).toEqual(expected);
    }),
  );

  it.each(SETS)(
    "%s: every pod runs restricted (non-root, read-only root filesystem, no privilege escalation, no capabilities, RuntimeDefault seccomp) without a service account token",
    (set) => {
      for (const w of workloads(objectsOf(set))) {
        const pod = w.spec.template.spec;
        expect(pod.automountServiceAccountToken, w.metadata.name).toBe(false);
        expect(pod.hostNetwork ?? false).toBe(false);
        expect(pod.hostPID ?? false).toBe(false);
        for (const c of [...(pod.initContainers ?? []), ...pod.containers]) {
          const where = `${w.metadata.name}/${c.name}`;
          const sc = { ...(pod.securityContext ?? {}), ...(c.securityContext ?? {}) };
          expect(sc.runAsNonRoot, where).toBe(true);
          if (sc.runAsUser !== undefined) expect(sc.runAsUser, where).toBeGreaterThan(0);
          expect(c.securityContext?.readOnlyRootFilesystem, where).toBe(true);
          expect(c.securityContext?.allowPrivilegeEscalation, where).toBe(false);
          expect(c.securityContext?.privileged ?? false, where).toBe(false);
          expect(c.securityContext?.capabilities?.drop, where).toEqual(RESTRICTED_CAPS);
          expect(c.securityContext?.capabilities?.add ?? [], where).toEqual([]);
          expect(sc.seccompProfile?.type, where).toBe("RuntimeDefault");
        }
      }
    },
  );

  it.each(SETS)("%s: Herald pods run as the release's ServiceAccount", (set) => {
    const objs = objectsOf(set);
    for (const d of heraldDeployments(objs)) {
      const sa = d.spec.template.spec.serviceAccountName;
      expect(byName(objs, "ServiceAccount", sa), `${d.metadata.name}: ServiceAccount ${sa}`).toBeDefined();
    }
  });

  it.each(SETS)("%s: every container has CPU and memory requests and a memory limit", (set) => {
    for (const w of workloads(objectsOf(set))) {
      for (const c of w.spec.template.spec.containers) {
        const where = `${w.metadata.name}/${c.name}`;
        expect(c.resources?.requests?.cpu, where).toBeTruthy();
        expect(c.resources?.requests?.memory, where).toBeTruthy();
        expect(c.resources?.limits?.memory, where).toBeTruthy();
      }
    }
  });

  it.each(SETS)(
    "%s: pods spread over nodes and zones, each constraint selecting exactly its Deployment's pods",
    (set) => {
      const objs = objectsOf(set);
      const all = workloads(objs);
      for (const d of heraldDeployments(objs)) {
        const constraints = (d.spec.template.spec.topologySpreadConstraints ?? []) as any[];
        if (!VALUE_SETS[set]!.topologySpread) {
          expect(constraints, d.metadata.name).toEqual([]);
          continue;
        }
        expect(constraints.map((t) => t.topologyKey).sort(), d.metadata.name).toEqual([
          "kubernetes.io/hostname",
          "topology.kubernetes.io/zone",
        ]);
        for (const t of constraints) {
          const selector = t.labelSelector?.matchLabels;
          expect(selects(selector, podLabels(d)), `${d.metadata.name} ${t.topologyKey}`).toBe(true);
          expect(all.filter((w) => selects(selector, podLabels(w))).map((w) => w.metadata.name)).toEqual([
            d.metadata.name,
          ]);
          expect(t.maxSkew).toBeGreaterThanOrEqual(1);
        }
      }
    },
  );

  it.each(SETS)(
    "%s: the grace period outlasts the process' shutdown after the preStop sleep (and a sender's drain + 5 s)",
    (set) =>
      eachDeployment(set, (d) => {
        const c = mainContainer(d);
        const grace = d.spec.template.spec.terminationGracePeriodSeconds as number;
        const afterSigterm = grace - preStopSeconds(c);
        expect(grace).toBeGreaterThan(PROCESS_SHUTDOWN_CAP_S);
        expect(afterSigterm, "seconds between SIGTERM and SIGKILL").toBeGreaterThan(PROCESS_SHUTDOWN_CAP_S);
        const role = roleOf(d);
        if (role.startsWith("sender-")) {
          const env = containerEnv(objectsOf(set), c);
          const spec = Object.values(ENV_SPECS[role]).find((v) => v.name === "SENDER_DRAIN_MS")!;
          const drainMs = Number(envValue(env, "SENDER_DRAIN_MS") || spec.default);
          expect(afterSigterm * 1000).toBeGreaterThan(drainMs + 5000);
        }
      }),
  );

  it("the gateway keeps serving through a preStop sleep, so endpoints drop it before SIGTERM", () => {
    const gateway = heraldDeployments(objectsOf("defaults")).find((d) => roleOf(d) === "gateway")!;
    expect(preStopSeconds(mainContainer(gateway))).toBeGreaterThan(0);
  });

  it.each(SETS)("%s: images are pinned: never `latest`, Herald's tag the chart's appVersion unless set", (set) => {
    const { appVersion } = chartMetadata();
    for (const w of workloads(objectsOf(set))) {
      for (const c of w.spec.template.spec.containers) {
        const image = c.image as string;
        const tag = /^[^@]+:([^:@/]+)(@sha256:[a-f0-9]{64})?$/.exec(image)?.[1];
        expect(tag, `${w.metadata.name}: ${image}`).toBeDefined();
        expect(tag).not.toBe("latest");
        if (w.metadata.labels?.["herald/dev-infra"] !== "true") {
          expect(image).toBe(`ghcr.io/herald-push/herald:${appVersion}`);
          expect(w.metadata.labels["app.kubernetes.io/version"]).toBe(appVersion);
        }
      }
    }
  });

  it("image.tag and image.digest pin the image", async () => {
    const digest = `sha256:${"ab".repeat(32)}`;
    const objs = await render({ values: { image: { tag: "1.2.3", digest } } });
    for (const d of heraldDeployments(objs)) {
      expect(mainContainer(d).image).toBe(`ghcr.io/herald-push/herald:1.2.3@${digest}`);
      expect(d.metadata.labels["app.kubernetes.io/version"]).toBe("1.2.3");
    }
  });
});

describe("rollouts on configuration changes", () => {
  const annotations = (objs: K8sObject[]) =>
    Object.fromEntries(heraldDeployments(objs).map((d) => [roleOf(d), d.spec.template.metadata.annotations ?? {}]));
  const configData = (objs: K8sObject[]) =>
    Object.fromEntries(
      heraldDeployments(objs).map((d) => [roleOf(d), byName(objs, "ConfigMap", d.metadata.name)?.data]),
    );

  /** The roles whose checksum/config changed; fails unless it changed exactly where the ConfigMap did. */
  function rolled(before: K8sObject[], after: K8sObject[]): string[] {
    const a0 = annotations(before);
    const a1 = annotations(after);
    const d0 = configData(before);
    const d1 = configData(after);
    const changed: string[] = [];
    for (const role of Object.keys(a0)) {
      expect(a0[role]!["checksum/config"], role).toMatch(/^[a-f0-9]{64}$/);
      const checksumChanged = a0[role]!["checksum/config"] !== a1[role]!["checksum/config"];
      const dataChanged = JSON.stringify(d0[role]) !== JSON.stringify(d1[role]);
      expect(checksumChanged, `${role}: checksum/config changed iff its ConfigMap did`).toBe(dataChanged);
      if (checksumChanged) changed.push(role);
    }
    return changed.sort();
  }

  it("checksum/config changes for exactly the components whose configuration changed", async () => {
    const base = objectsOf("defaults");
    expect(rolled(base, await render())).toEqual([]);
    const oneSetting = await render({ values: { components: { senderApns: { config: { maxInFlight: 100 } } } } });
    expect(rolled(base, oneSetting)).toEqual(["sender-apns"]);
    const logLevel = await render({ values: { defaults: { logLevel: "debug" } } });
    expect(rolled(base, logLevel)).toEqual([...ROLE_NAMES].sort());
    const webPush = await render({ values: { webPush: { allowedHosts: ["fcm.googleapis.com"] } } });
    expect(rolled(base, webPush)).toEqual(["device-registry", "sender-webpush"]);
  });

  it("checksum/secret changes when a connection URL changes, and not between identical renders", async () => {
    const before = annotations(objectsOf("minimal"));
    const same = annotations(await render(VALUE_SETS.minimal!));
    const changed = annotations(
      await render({ ...VALUE_SETS.minimal!, values: { postgresql: { url: "postgres://herald@pg2:5432/herald" } } }),
    );
    for (const role of Object.keys(before)) {
      expect(before[role]!["checksum/secret"], role).toMatch(/^[a-f0-9]{64}$/);
      expect(same[role]!["checksum/secret"], role).toBe(before[role]!["checksum/secret"]);
    }
    expect(changed.credential!["checksum/secret"]).not.toBe(before.credential!["checksum/secret"]);
  });
});

describe("Services, Ingress and ServiceMonitors", () => {
  it.each(SETS)("%s: every Service selects exactly one workload's pods, on ports its container declares", (set) => {
    const objs = objectsOf(set);
    for (const svc of ofKind(objs, "Service")) {
      const selected = workloads(objs).filter((w) => selects(svc.spec.selector, podLabels(w)));
      expect(
        selected.map((w) => w.metadata.name),
        `Service ${svc.metadata.name}`,
      ).toHaveLength(1);
      const c = mainContainer(selected[0]!);
      for (const p of svc.spec.ports) {
        const target = containerPort(c, p.targetPort ?? p.port);
        expect(target, `Service ${svc.metadata.name} port ${p.name} → ${p.targetPort}`).toBeDefined();
        // Herald relies on a Service port being its container port (docs/operations.md).
        expect(p.port, `Service ${svc.metadata.name} port ${p.name}`).toBe(target.containerPort);
      }
    }
  });

  it("the Ingress routes every host to the gateway Service's http port and terminates TLS for them", () => {
    for (const set of ["ingress-tls", "production-ha"]) {
      const objs = objectsOf(set);
      const [ingress] = ofKind(objs, "Ingress");
      const gateway = heraldDeployments(objs).find((d) => roleOf(d) === "gateway")!;
      const hosts = (ingress!.spec.rules as any[]).map((r) => r.host);
      expect(hosts.length).toBeGreaterThan(0);
      for (const rule of ingress!.spec.rules) {
        for (const p of rule.http.paths) {
          const svc = byName(objs, "Service", p.backend.service.name);
          expect(svc, `${set}: backend ${p.backend.service.name}`).toBeDefined();
          expect(selects(svc!.spec.selector, podLabels(gateway))).toBe(true);
          expect((svc!.spec.ports as any[]).map((x) => x.name)).toContain(p.backend.service.port.name);
        }
      }
      const tlsHosts = (ingress!.spec.tls as any[]).flatMap((t) => t.hosts);
      expect(tlsHosts.sort()).toEqual([...hosts].sort());
    }
    const ingress = ofKind(objectsOf("ingress-tls"), "Ingress")[0]!;
    expect(ingress.spec.ingressClassName).toBe("nginx");
    expect(ingress.spec.tls).toEqual([{ hosts: ["push.example.com", "api.example.org"], secretName: "push-tls" }]);
    expect(ingress.metadata.annotations).toEqual({ "cert-manager.io/cluster-issuer": "letsencrypt" });
  });

  it("the ingress needs the gateway", async () => {
    const err = await renderFailure({
      values: { ingress: { enabled: true }, components: { gateway: { enabled: false } } },
    });
    expect(err.stderr).toMatch(/ingress\.enabled needs components\.gateway\.enabled/);
  });

  it("every ServiceMonitor scrapes /metrics on the admin port of exactly one Service in the release namespace", () => {
    for (const set of ["production-ha", "no-webpush"]) {
      const objs = objectsOf(set);
      const monitors = ofKind(objs, "ServiceMonitor");
      expect(monitors.length).toBe(heraldDeployments(objs).length);
      for (const sm of monitors) {
        const services = ofKind(objs, "Service").filter((s) =>
          selects(sm.spec.selector.matchLabels, s.metadata.labels),
        );
        expect(
          services.map((s) => s.metadata.name),
          `${set} ${sm.metadata.name}`,
        ).toHaveLength(1);
        expect(sm.spec.namespaceSelector.matchNames).toEqual([VALUE_SETS[set]!.namespace]);
        const svc = services[0]!;
        const [endpoint] = sm.spec.endpoints;
        expect(endpoint.path).toBe("/metrics");
        const svcPort = (svc.spec.ports as any[]).find((p) => p.name === endpoint.port);
        expect(svcPort, `${sm.metadata.name}: port ${endpoint.port}`).toBeDefined();
        // /metrics is served where the health endpoints are.
        const d = workloads(objs).find((w) => selects(svc.spec.selector, podLabels(w)))!;
        const c = mainContainer(d);
        expect(containerPort(c, svcPort.targetPort).containerPort).toBe(
          containerPort(c, c.readinessProbe.httpGet.port).containerPort,
        );
      }
    }
  });
});

describe("disruption budgets and autoscaling", () => {
  /** The least number of replicas a Deployment runs: its HPA's or ScaledObject's minimum, or replicas. */
  function minReplicas(objs: K8sObject[], d: K8sObject): number {
    const hpa = ofKind(objs, "HorizontalPodAutoscaler").find((h) => h.spec.scaleTargetRef.name === d.metadata.name);
    const so = ofKind(objs, "ScaledObject").find((s) => s.spec.scaleTargetRef.name === d.metadata.name);
    if (hpa) return hpa.spec.minReplicas ?? 1;
    if (so) return so.spec.minReplicaCount ?? 0;
    return d.spec.replicas ?? 1;
  }

  it.each(SETS)(
    "%s: every PDB selects exactly one Deployment's pods, and there is one exactly for each component running more than one replica",
    (set) => {
      const objs = objectsOf(set);
      const pdbs = ofKind(objs, "PodDisruptionBudget");
      for (const pdb of pdbs) {
        const selected = workloads(objs).filter((w) => selects(pdb.spec.selector.matchLabels, podLabels(w)));
        expect(
          selected.map((w) => w.metadata.name),
          `PDB ${pdb.metadata.name}`,
        ).toEqual([pdb.metadata.name]);
        const min = minReplicas(objs, selected[0]!);
        // A budget must let at least one pod go, or node drains block forever.
        if (pdb.spec.minAvailable !== undefined) expect(pdb.spec.minAvailable).toBeLessThan(min);
        else expect(pdb.spec.maxUnavailable).toBeGreaterThanOrEqual(1);
      }
      for (const d of heraldDeployments(objs)) {
        const hasPdb = pdbs.some((p) => selects(p.spec.selector.matchLabels, podLabels(d)));
        expect(hasPdb, `${d.metadata.name} (min ${minReplicas(objs, d)} replicas)`).toBe(minReplicas(objs, d) > 1);
      }
    },
  );

  it("the value sets cover budgets for replicas, HPA minimums and KEDA minimums alike", () => {
    const prod = objectsOf("production-ha");
    const pdbFor = (role: string) =>
      ofKind(prod, "PodDisruptionBudget").some((p) => p.metadata.name === `herald-${role}`);
    expect(["gateway", "credential", "sender-fcm"].map(pdbFor)).toEqual([true, true, true]);
    expect(ofKind(objectsOf("keda-all-senders"), "PodDisruptionBudget")).toEqual([]);
    expect(ofKind(objectsOf("defaults"), "PodDisruptionBudget")).toEqual([]);
  });

  it.each(SETS)(
    "%s: every HPA and ScaledObject targets a rendered Deployment, none both, and a Deployment they scale sets no replicas",
    (set) => {
      const objs = objectsOf(set);
      const scalers = [...ofKind(objs, "HorizontalPodAutoscaler"), ...ofKind(objs, "ScaledObject")];
      const targets = scalers.map((s) => {
        const ref = s.spec.scaleTargetRef;
        expect(ref.kind ?? "Deployment", s.metadata.name).toBe("Deployment");
        expect(ref.apiVersion ?? "apps/v1", s.metadata.name).toBe("apps/v1");
        expect(byName(objs, "Deployment", ref.name), `${s.kind} ${s.metadata.name} → ${ref.name}`).toBeDefined();
        return ref.name as string;
      });
      expect(new Set(targets).size, "a Deployment targeted twice").toBe(targets.length);
      for (const d of heraldDeployments(objs)) {
        if (targets.includes(d.metadata.name)) expect(d.spec.replicas, d.metadata.name).toBeUndefined();
        else expect(d.spec.replicas, d.metadata.name).toBeGreaterThanOrEqual(1);
      }
      for (const hpa of ofKind(objs, "HorizontalPodAutoscaler")) {
        expect(hpa.spec.maxReplicas).toBeGreaterThanOrEqual(hpa.spec.minReplicas);
        expect(hpa.spec.metrics.length).toBeGreaterThan(0);
      }
    },
  );

  it("HPA and KEDA both on for a sender fails the render, naming the component", async () => {
    const err = await renderFailure({
      values: {
        nats: { monitoringEndpoint: "nats.nats.svc:8222" },
        components: { senderFcm: { autoscaling: { hpa: { enabled: true }, keda: { enabled: true } } } },
      },
    });
    expect(err.exitCode).not.toBe(0);
    expect(err.stderr).toMatch(/components\.senderFcm\.autoscaling: enable either hpa or keda, not both/);
  });

  it("KEDA without a NATS monitoring endpoint fails the render", async () => {
    const err = await renderFailure({
      values: { components: { senderApns: { autoscaling: { keda: { enabled: true } } } } },
    });
    expect(err.stderr).toMatch(/components\.senderApns\.autoscaling\.keda needs nats\.monitoringEndpoint/);
  });

  it.each(SETS.filter((s) => VALUE_SETS[s]!.natsMonitoringEndpoint))(
    "%s: each ScaledObject watches the stream and durable consumer its component uses (streams.ts, with the process' NATS_NAMESPACE)",
    (set) => {
      const objs = objectsOf(set);
      const { natsNamespace, natsMonitoringEndpoint } = VALUE_SETS[set]!;
      const scaled = ofKind(objs, "ScaledObject");
      expect(scaled.length).toBeGreaterThan(0);
      for (const so of scaled) {
        const d = byName(objs, "Deployment", so.spec.scaleTargetRef.name)!;
        const role = roleOf(d);
        // The namespace the process will use is what its environment says.
        const ns = envValue(containerEnv(objs, mainContainer(d)), "NATS_NAMESPACE") ?? "";
        expect(ns).toBe(natsNamespace);
        const names = streamNames(ns);
        const platform = SENDER_PLATFORM[role];
        // The consumer each process creates: packages/sender's, the dispatcher's.
        const watched =
          platform !== undefined
            ? { stream: names.deliveryStream, consumer: names.consumer(`sender-${platform}`) }
            : role === "webhooks"
              ? { stream: names.webhooksStream, consumer: names.consumer(WEBHOOK_EVENTS_DURABLE) }
              : undefined;
        expect(watched, `${so.metadata.name} scales a sender or webhooks`).toBeDefined();
        const [trigger, ...more] = so.spec.triggers;
        expect(trigger.type).toBe("nats-jetstream");
        expect(trigger.metadata).toMatchObject({
          ...watched,
          account: "$G",
          natsServerMonitoringEndpoint: natsMonitoringEndpoint,
          useHttps: "false",
        });
        expect(Number(trigger.metadata.lagThreshold)).toBeGreaterThan(0);
        expect(Number(trigger.metadata.activationLagThreshold)).toBeGreaterThanOrEqual(0);
        expect(so.spec.maxReplicaCount).toBeGreaterThanOrEqual(so.spec.minReplicaCount);
        // Only webhooks has a second trigger, when given a Prometheus server.
        if (role !== "webhooks") expect(more).toEqual([]);
        for (const t of more) expect(t.type).toBe("prometheus");
      }
    },
  );

  it("webhooks scales on its events backlog and on the due deliveries its replicas report", async () => {
    const objs = objectsOf("keda-webhooks");
    const [so] = ofKind(objs, "ScaledObject");
    const d = byName(objs, "Deployment", so!.spec.scaleTargetRef.name)!;
    expect(roleOf(d)).toBe("webhooks");
    // The API is served throughout: never scaled to zero.
    expect(so!.spec.minReplicaCount).toBe(2);
    const prometheus = so!.spec.triggers[1];
    expect(prometheus.type).toBe("prometheus");
    expect(prometheus.metadata).toMatchObject({
      serverAddress: "http://prometheus-operated.monitoring.svc:9090",
      threshold: "32",
      activationThreshold: "0",
    });
    // The query names a gauge the dispatcher registers, with the labels the chart's
    // ServiceMonitor gives its series: the release namespace and the webhooks Service.
    const query: string = prometheus.metadata.query;
    const [, metric, labels] = /^max\((herald_[a-z_]+)\{(.*)\}\)$/.exec(query) ?? [];
    const registry = new Registry();
    createWebhookMetrics(registry, { backlog: async () => 0, due: async () => 0 });
    expect(registry.getSingleMetric(metric ?? ""), query).toBeInstanceOf(Gauge);
    const svc = ofKind(objs, "Service").find((s) => selects(s.spec.selector, podLabels(d)))!;
    expect(labels).toBe(`namespace="${VALUE_SETS["keda-webhooks"]!.namespace}",service="${svc.metadata.name}"`);
    const sm = ofKind(objs, "ServiceMonitor").find((m) => selects(m.spec.selector.matchLabels, svc.metadata.labels))!;
    expect(sm.spec.namespaceSelector.matchNames).toEqual([VALUE_SETS["keda-webhooks"]!.namespace]);
    // Its own query, when given, is used as is; the least replica count defaults to 1.
    const custom = await render({
      ...VALUE_SETS["keda-webhooks"]!,
      values: {
        ...VALUE_SETS["keda-webhooks"]!.values,
        components: {
          webhooks: {
            autoscaling: {
              keda: {
                enabled: true,
                dueDeliveries: { serverAddress: "http://prom:9090", query: "sum(my_due_deliveries)" },
              },
            },
          },
        },
      },
    });
    const [customSo] = ofKind(custom, "ScaledObject");
    expect(customSo!.spec.triggers[1].metadata.query).toBe("sum(my_due_deliveries)");
    expect(customSo!.spec.minReplicaCount).toBe(1);
  });

  it("HPA and KEDA both on for webhooks fails the render, as for a sender", async () => {
    const err = await renderFailure({
      values: {
        nats: { monitoringEndpoint: "nats.nats.svc:8222" },
        components: { webhooks: { autoscaling: { hpa: { enabled: true }, keda: { enabled: true } } } },
      },
    });
    expect(err.stderr).toMatch(/components\.webhooks\.autoscaling: enable either hpa or keda, not both/);
  });

  it("the namespaced and plain JetStream names differ as streams.ts makes them", () => {
    const plain = ofKind(objectsOf("keda-all-senders"), "ScaledObject").map((s) => s.spec.triggers[0].metadata);
    const namespaced = ofKind(objectsOf("nats-namespace"), "ScaledObject").map((s) => s.spec.triggers[0].metadata);
    expect(plain.map((m) => [m.stream, m.consumer])).toEqual([
      ["DELIVERY", "sender-ios"],
      ["DELIVERY", "sender-android"],
      ["DELIVERY", "sender-web"],
    ]);
    expect(namespaced.map((m) => [m.stream, m.consumer])).toEqual([
      ["tenant_a_DELIVERY", "tenant_a_sender-ios"],
      ["tenant_a_DELIVERY", "tenant_a_sender-android"],
      ["tenant_a_DELIVERY", "tenant_a_sender-web"],
    ]);
    const webhooks = ofKind(objectsOf("keda-webhooks"), "ScaledObject").map((s) => s.spec.triggers[0].metadata);
    expect(webhooks.map((m) => [m.stream, m.consumer])).toEqual([
      ["tenant_b_WEBHOOKS", "tenant_b_webhooks-dispatcher"],
    ]);
  });

  it("with the bundled NATS, KEDA reads its monitoring port through a rendered Service", () => {
    const objs = objectsOf("dev-keda-netpol");
    const endpoint = ofKind(objs, "ScaledObject")[0]!.spec.triggers[0].metadata.natsServerMonitoringEndpoint as string;
    const [, service, namespace, port] = /^([^.]+)\.([^.]+)\.svc:(\d+)$/.exec(endpoint) ?? [];
    expect(namespace).toBe(VALUE_SETS["dev-keda-netpol"]!.namespace);
    const svc = byName(objs, "Service", service ?? "");
    expect(svc, endpoint).toBeDefined();
    expect((svc!.spec.ports as any[]).map((p) => p.port)).toContain(Number(port));
  });
});

/** A role's Node options in dev mode (scripts/processes.mjs), with another old-generation size. */
const withOldSpace = (role: RoleName, mib: number) =>
  nodeOptionsOf(role).replace(/--max-old-space-size=\d+/, `--max-old-space-size=${mib}`);

describe("environment", () => {
  it.each(SETS)(
    "%s: every secretKeyRef, configMapKeyRef and envFrom resolves to a rendered key, or to the user's Secret exactly as given in values",
    (set) => {
      const objs = objectsOf(set);
      const { existingSecrets } = VALUE_SETS[set]!;
      const used = new Set<string>();
      for (const w of workloads(objs)) {
        for (const c of w.spec.template.spec.containers) {
          const where = `${w.metadata.name}/${c.name}`;
          for (const from of c.envFrom ?? []) {
            const kind = from.configMapRef ? "ConfigMap" : "Secret";
            const ref = from.configMapRef ?? from.secretRef;
            expect(byName(objs, kind, ref.name), `${where}: envFrom ${kind} ${ref.name}`).toBeDefined();
          }
          for (const e of c.env ?? []) {
            const ref = e.valueFrom?.secretKeyRef ?? e.valueFrom?.configMapKeyRef;
            if (!ref) continue;
            const kind = e.valueFrom.secretKeyRef ? "Secret" : "ConfigMap";
            const rendered = byName(objs, kind, ref.name);
            if (rendered) {
              expect(Object.keys(rendered.data ?? {}), `${where}: ${e.name} → ${kind} ${ref.name}`).toContain(ref.key);
              expect(existingSecrets[e.name], `${where}: ${e.name} should come from the user's Secret`).toBeUndefined();
            } else {
              expect(kind, `${where}: ${e.name} → ${ref.name}`).toBe("Secret");
              expect({ name: ref.name, key: ref.key }, `${where}: ${e.name}`).toEqual(existingSecrets[e.name]);
              expect(ref.optional ?? false).toBe(false);
              used.add(e.name);
            }
          }
        }
      }
      expect([...used].sort()).toEqual(Object.keys(existingSecrets).sort());
    },
  );

  it.each(SETS)(
    "%s: the process gets every variable it requires, its URLs and ports, and reads every variable the chart sets",
    (set) =>
      eachDeployment(set, (d) => {
        const role = roleOf(d);
        const env = containerEnv(objectsOf(set), mainContainer(d));
        const reads = specNames(role);
        const set_ = [...env.keys()];
        const unread = set_.filter((n) => !reads.has(n) && !EXTRA_ENV.test(n));
        expect(unread, `${role} does not read these`).toEqual([]);
        const required = Object.values(ENV_SPECS[role])
          .filter((v) => !("default" in v))
          .map((v) => v.name);
        // Defaults of these point at 127.0.0.1 or a fixed port: wrong in a pod.
        const mustSet = [
          ...Object.keys(SERVICE_URL_VARS),
          ...Object.keys(INFRA_VARS),
          "PORT",
          "ADMIN_PORT",
          "NATS_NAMESPACE",
        ];
        for (const name of [...required, ...mustSet.filter((n) => reads.has(n))]) {
          expect(env.has(name), `${role} needs ${name}`).toBe(true);
        }
        // The credential and webhooks services need the master key.
        expect(required.length === 0 || role === "credential" || role === "webhooks").toBe(true);
      }),
  );

  it.each(SETS)("%s: every value the chart sets parses as the process parses it", (set) =>
    eachDeployment(set, (d) => {
      const role = roleOf(d);
      const env = containerEnv(objectsOf(set), mainContainer(d));
      const problems: string[] = [];
      for (const v of Object.values(ENV_SPECS[role])) {
        const raw = envValue(env, v.name);
        if (raw === undefined || raw === "") continue; // unset or empty: the default
        try {
          v.parse(raw);
        } catch (err) {
          problems.push(`${v.name}=${JSON.stringify(raw)}: ${(err as Error).message}`);
        }
      }
      expect(problems, d.metadata.name).toEqual([]);
    }),
  );

  it.each(SETS)(
    "%s: processes that share a setting get the same value (Web Push rules, NATS namespace, Redis key prefix)",
    (set) => {
      const objs = objectsOf(set);
      const SHARED = [
        "HERALD_WEBPUSH_ALLOW_PRIVATE",
        "HERALD_WEBPUSH_ALLOWED_HOSTS",
        "NATS_NAMESPACE",
        "NATS_STREAM_REPLICAS",
        "REDIS_KEY_PREFIX",
      ];
      for (const name of SHARED) {
        const values = new Map<string, string>();
        for (const d of heraldDeployments(objs)) {
          if (!specNames(roleOf(d)).has(name)) continue;
          values.set(roleOf(d), envValue(containerEnv(objs, mainContainer(d)), name) ?? "");
        }
        expect(values.size, `${name}: read by more than one process`).toBeGreaterThan(set === "no-webpush" ? 0 : 1);
        expect(new Set(values.values()).size, `${name}: ${JSON.stringify(Object.fromEntries(values))}`).toBe(1);
      }
    },
  );

  it("values reach the processes: production-ha's Web Push hosts and CORS origins, dev's log level and NATS namespace", () => {
    const envOf = (set: string, role: string, name: string) => {
      const objs = objectsOf(set);
      const d = heraldDeployments(objs).find((x) => roleOf(x) === role)!;
      return envValue(containerEnv(objs, mainContainer(d)), name);
    };
    const hosts = "fcm.googleapis.com,updates.push.services.mozilla.com,web.push.apple.com,*.notify.windows.com";
    expect(envOf("production-ha", "device-registry", "HERALD_WEBPUSH_ALLOWED_HOSTS")).toBe(hosts);
    expect(envOf("production-ha", "sender-webpush", "HERALD_WEBPUSH_ALLOWED_HOSTS")).toBe(hosts);
    expect(envOf("production-ha", "gateway", "HERALD_CORS_ORIGINS")).toBe("https://admin.example.com");
    for (const role of ROLE_NAMES) {
      expect(envOf("dev", role, "LOG_LEVEL"), role).toBe("debug");
      expect(envOf("production-ha", role, "LOG_LEVEL"), role).toBe("info");
    }
    expect(envOf("dev", "sender-fcm", "NATS_NAMESPACE")).toBe("dev");
  });

  it("production-ha replicates every stream on three NATS servers; one replica by default", () => {
    for (const [set, replicas] of [
      ["production-ha", "3"],
      ["defaults", "1"],
    ] as const) {
      const objs = objectsOf(set);
      const readers = heraldDeployments(objs).filter((d) => specNames(roleOf(d)).has("NATS_STREAM_REPLICAS"));
      // Every component that creates streams: all but the gateway.
      expect(readers.map(roleOf).sort(), set).toEqual(ROLE_NAMES.filter((r) => r !== "gateway").sort());
      for (const d of readers) {
        const env = containerEnv(objs, mainContainer(d));
        expect(envValue(env, "NATS_STREAM_REPLICAS"), `${set} ${roleOf(d)}`).toBe(replicas);
        expect(env.has("NATS_STREAM_PLACEMENT_TAGS"), `${set} ${roleOf(d)}`).toBe(false);
      }
    }
  });

  it.each(SETS)("%s: V8's old generation fits each container's memory limit (NODE_OPTIONS)", (set) =>
    eachDeployment(set, (d) => {
      const c = mainContainer(d);
      const options = envValue(containerEnv(objectsOf(set), c), "NODE_OPTIONS");
      const limit: string | undefined = c.resources?.limits?.memory;
      if (limit === undefined) {
        expect(options, `${d.metadata.name}: no limit, dev mode's options`).toBe(nodeOptionsOf(roleOf(d)));
        return;
      }
      const mib = Number(limit.replace(/Mi$/, ""));
      expect(`${mib}Mi`, "the value sets give limits in Mi").toBe(limit);
      expect(options, d.metadata.name).toBe(withOldSpace(roleOf(d), Math.max(Math.floor(mib / 2), mib - 128)));
    }),
  );

  it("NODE_OPTIONS: quantities in every notation, no limit, a component's semi-space and its own NODE_OPTIONS", async () => {
    const limits: Record<string, string | number | null> = {
      gateway: "1.5Gi",
      credential: "1G",
      deviceRegistry: 5e8,
      campaign: "256Mi",
      senderApns: "2Gi",
      senderFcm: null,
      senderWebpush: "512Mi",
    };
    const components: Record<string, Record<string, unknown>> = Object.fromEntries(
      Object.entries(limits).map(([key, memory]) => [key, { resources: { limits: { memory } } }]),
    );
    components.senderWebpush = { ...components.senderWebpush, env: { NODE_OPTIONS: "--max-old-space-size=999" } };
    components.senderApns = { ...components.senderApns, semiSpaceMiB: 8 };
    const objs = await render({ values: { components } });
    const options = Object.fromEntries(
      heraldDeployments(objs).map((d) => [roleOf(d), envValue(containerEnv(objs, mainContainer(d)), "NODE_OPTIONS")]),
    );
    const old = (mib: number) => `--max-semi-space-size=4 --max-old-space-size=${mib}`;
    expect(options).toEqual({
      gateway: old(1536 - 128),
      credential: old(953 - 128), // 10⁹ bytes
      "device-registry": old(476 - 128), // 5·10⁸ bytes
      campaign: old(128), // half of 256
      "sender-apns": `--max-semi-space-size=8 --max-old-space-size=${2048 - 128}`,
      "sender-fcm": old(384), // no limit: the image's old generation
      "sender-webpush": "--max-old-space-size=999",
      webhooks: old(384), // no limit: the image's old generation
    });
    const err = await renderFailure({
      values: { components: { campaign: { resources: { limits: { memory: "lots" } } } } },
    });
    expect(err.stderr).toContain("components.campaign.resources.limits.memory");
  });

  it("initialOldSpaceMiB: a component's --initial-old-space-size on node's command line, none at 0", async () => {
    const objs = await render({
      values: { components: { gateway: { initialOldSpaceMiB: 32 }, senderWebpush: { initialOldSpaceMiB: 0 } } },
    });
    const commands = Object.fromEntries(heraldDeployments(objs).map((d) => [roleOf(d), mainContainer(d).command]));
    const cli = "/app/packages/cli/dist/main.js";
    expect(commands.gateway).toEqual(["node", "--initial-old-space-size=32", cli]);
    expect(commands["sender-webpush"]).toEqual(["node", cli]);
    expect(commands["sender-apns"]).toEqual(["node", cli]);
    expect(commands.campaign).toEqual(["node", cli]);
    const err = await renderFailure({ values: { components: { gateway: { initialOldSpaceMiB: -1 } } } });
    expect(err.stderr).toContain("initialOldSpaceMiB");
  });

  it.each(SETS)("%s: service URLs point at the callee's Service and RPC port", (set) =>
    eachDeployment(set, (d) => {
      const objs = objectsOf(set);
      const env = containerEnv(objs, mainContainer(d));
      for (const [name, callee] of Object.entries(SERVICE_URL_VARS)) {
        if (!specNames(roleOf(d)).has(name)) continue;
        const url = new URL(envValue(env, name)!);
        expect(url.protocol, `${name}=${url}`).toBe("http:");
        const svc = byName(objs, "Service", url.hostname);
        expect(svc, `${name}=${url}`).toBeDefined();
        const target = workloads(objs).find((w) => selects(svc!.spec.selector, podLabels(w)))!;
        expect(roleOf(target)).toBe(callee);
        const port = (svc!.spec.ports as any[]).find((p) => p.port === Number(url.port));
        expect(port?.name, `${name}=${url}`).toBe("grpc");
      }
    }),
  );

  it("a component calling a disabled one fails the render, unless the callee's URL is given", async () => {
    const elsewhere = (urlVar: string) => ({ env: { [urlVar]: "http://elsewhere:7000" } });
    for (const [components, caller, urlVar] of [
      [{ campaign: { enabled: false } }, "gateway", "CAMPAIGN_URL"],
      [
        { deviceRegistry: { enabled: false }, gateway: elsewhere("DEVICE_REGISTRY_URL") },
        "campaign",
        "DEVICE_REGISTRY_URL",
      ],
      [{ credential: { enabled: false }, gateway: elsewhere("CREDENTIAL_URL") }, "senderApns", "CREDENTIAL_URL"],
    ] as const) {
      const err = await renderFailure({ values: { components } });
      expect(err.stderr).toContain(`components.${caller} calls`);
      expect(err.stderr).toContain(`components.${caller}.env.${urlVar}`);
    }
    const url = "http://campaign.elsewhere.svc:7002";
    const objs = await render({
      values: { components: { campaign: { enabled: false }, gateway: { env: { CAMPAIGN_URL: url } } } },
    });
    const gateway = heraldDeployments(objs).find((d) => roleOf(d) === "gateway")!;
    expect(envValue(containerEnv(objs, mainContainer(gateway)), "CAMPAIGN_URL")).toBe(url);
    expect(heraldDeployments(objs).map(roleOf)).not.toContain("campaign");
  });

  it.each(SETS)(
    "%s: infrastructure URLs the chart stores point at the bundled services or the configured ones",
    (set) => {
      const objs = objectsOf(set);
      const connections = ofKind(objs, "Secret").find((s) => s.metadata.name.endsWith("-connections"));
      const own = Object.keys(INFRA_VARS).filter((v) => v in VALUE_SETS[set]!.existingSecrets);
      if (own.length === Object.keys(INFRA_VARS).length) {
        expect(connections, "every URL is in the user's Secret").toBeUndefined();
        return;
      }
      expect(own, "the value sets keep all URLs or none in the user's Secret").toEqual([]);
      const urls = Object.fromEntries(
        Object.entries(connections!.data as Record<string, string>).map(([k, v]) => [
          k,
          Buffer.from(v, "base64").toString(),
        ]),
      );
      expect(Object.keys(urls).sort()).toEqual(["DATABASE_URL", "NATS_URL", "REDIS_URL"]);
      for (const [name, url] of Object.entries(urls)) {
        const u = new URL(url);
        expect(Number(u.port), name).toBe(INFRA_VARS[name]);
        if (set.startsWith("dev")) {
          // The bundled service, by its Service name.
          const svc = byName(objs, "Service", u.hostname);
          expect(svc?.metadata.labels["herald/dev-infra"], `${name}=${url}`).toBe("true");
          expect((svc!.spec.ports as any[]).map((p) => p.port)).toContain(INFRA_VARS[name]);
        }
      }
    },
  );
});

describe("NetworkPolicies", () => {
  const NETPOL_SETS = ["production-ha", "no-webpush", "dev-keda-netpol"];
  const METRICS_PEERS = [{ namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": "monitoring" } } }];

  const policyOf = (objs: K8sObject[], d: K8sObject): K8sObject => {
    const policies = ofKind(objs, "NetworkPolicy").filter((p) => selects(p.spec.podSelector.matchLabels, podLabels(d)));
    expect(
      policies.map((p) => p.metadata.name),
      d.metadata.name,
    ).toHaveLength(1);
    return policies[0]!;
  };
  const covers = (rule: any, port: any) =>
    !rule.ports?.length ||
    (rule.ports as any[]).some(
      (p) => (p.port === port.containerPort || p.port === port.name) && (p.protocol ?? "TCP") === "TCP",
    );
  /** The ingress rules letting traffic reach a container port. */
  const ingressTo = (policy: K8sObject, port: any) =>
    ((policy.spec.ingress ?? []) as any[]).filter((r) => covers(r, port));
  /** The enabled roles whose process reads the variable naming `role`'s service. */
  const callersOf = (objs: K8sObject[], role: RoleName): RoleName[] => {
    const urlVar = Object.entries(SERVICE_URL_VARS).find(([, r]) => r === role)?.[0];
    return heraldDeployments(objs)
      .map(roleOf)
      .filter((r) => urlVar && specNames(r).has(urlVar))
      .sort();
  };

  it("policies are rendered for exactly the value sets that enable them", () => {
    const withPolicies = SETS.filter((s) => ofKind(objectsOf(s), "NetworkPolicy").length > 0);
    expect(withPolicies.sort()).toEqual([...NETPOL_SETS].sort());
  });

  it("the gateway's port is open to anyone when networkPolicy.gateway.from is empty", () => {
    const objs = objectsOf("no-webpush");
    const gateway = heraldDeployments(objs).find((d) => roleOf(d) === "gateway")!;
    const rules = ingressTo(policyOf(objs, gateway), containerPort(mainContainer(gateway), "http"));
    expect(rules.some((r) => !r.from?.length)).toBe(true);
  });

  it("production-ha: the gateway's port is open to the ingress controller (and Prometheus) only", () => {
    const objs = objectsOf("production-ha");
    const gateway = heraldDeployments(objs).find((d) => roleOf(d) === "gateway")!;
    const rules = ingressTo(policyOf(objs, gateway), containerPort(mainContainer(gateway), "http"));
    expect(rules.every((r) => r.from?.length > 0)).toBe(true);
    expect(rules.flatMap((r) => r.from)).toEqual(
      expect.arrayContaining([
        { namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": "ingress-nginx" } } },
        ...METRICS_PEERS,
      ]),
    );
    expect(rules.flatMap((r) => r.from)).toHaveLength(2);
  });

  it.each(NETPOL_SETS)(
    "%s: each service's RPC port accepts only its callers' pods, the admin port only Prometheus",
    (set) => {
      const objs = objectsOf(set);
      const deployments = heraldDeployments(objs);
      const expectedCallers: Record<string, RoleName[]> = {
        credential: ["gateway", "sender-apns", "sender-fcm", "sender-webpush"],
        "device-registry": ["campaign", "gateway"],
        campaign: ["gateway"],
        webhooks: ["gateway"],
      };
      for (const d of deployments) {
        const role = roleOf(d);
        const policy = policyOf(objs, d);
        expect(policy.spec.policyTypes).toEqual(["Ingress", "Egress"]);
        const c = mainContainer(d);
        const grpc = containerPort(c, "grpc");
        if (grpc) {
          const callers = callersOf(objs, role);
          expect(callers, `callers of ${role} (from the code)`).toEqual(
            expectedCallers[role]!.filter((r) => VALUE_SETS[set]!.roles.includes(r)),
          );
          const rules = ingressTo(policy, grpc);
          const peers = rules.flatMap((r) => {
            expect(r.from?.length, `${role}: a rule open to anyone`).toBeGreaterThan(0);
            return r.from as any[];
          });
          for (const peer of peers) {
            expect(Object.keys(peer), `${role}: same-namespace pod peers only`).toEqual(["podSelector"]);
          }
          const allowed = deployments
            .filter((w) => peers.some((p) => selects(p.podSelector.matchLabels, podLabels(w))))
            .map(roleOf)
            .sort();
          expect(allowed, `${role} RPC port`).toEqual(callers);
        }
        const admin = containerPort(c, "admin");
        if (admin) {
          expect(
            ingressTo(policy, admin).flatMap((r) => r.from ?? ["anyone"]),
            `${role} admin port`,
          ).toEqual(METRICS_PEERS);
        }
        // Nothing else is reachable: every rule names its ports.
        for (const r of policy.spec.ingress ?? [])
          expect(r.ports?.length, `${role}: rule without ports`).toBeGreaterThan(0);
      }
    },
  );

  it.each(NETPOL_SETS)(
    "%s: each process may reach DNS, the services it calls, its infrastructure, and (senders) the push services",
    (set) => {
      const objs = objectsOf(set);
      const deployments = heraldDeployments(objs);
      for (const d of deployments) {
        const role = roleOf(d);
        const egress = (policyOf(objs, d).spec.egress ?? []) as any[];
        const allows = (port: number, protocol = "TCP", peer?: (p: any) => boolean) =>
          egress.some(
            (r) =>
              (r.ports as any[]).some((p) => p.port === port && (p.protocol ?? "TCP") === protocol) &&
              (!peer || (r.to as any[] | undefined)?.some(peer)),
          );
        expect(allows(53, "UDP"), `${role}: DNS`).toBe(true);
        const reads = specNames(role);
        for (const [urlVar, callee] of Object.entries(SERVICE_URL_VARS)) {
          if (!reads.has(urlVar)) continue;
          const target = deployments.find((w) => roleOf(w) === callee);
          if (!target) continue;
          const port = containerPort(mainContainer(target), "grpc").containerPort;
          expect(
            allows(port, "TCP", (p) => selects(p.podSelector?.matchLabels, podLabels(target))),
            `${role} → ${callee}:${port}`,
          ).toBe(true);
        }
        for (const [infraVar, port] of Object.entries(INFRA_VARS)) {
          if (!reads.has(infraVar)) continue;
          if (set.startsWith("dev")) {
            const bundled = workloads(objs).filter((w) => w.metadata.labels?.["herald/dev-infra"] === "true");
            const serving = bundled.find((w) => mainContainer(w).ports.some((p: any) => p.containerPort === port))!;
            expect(
              allows(port, "TCP", (p) => selects(p.podSelector?.matchLabels, podLabels(serving))),
              `${role} → ${serving.metadata.name}:${port}`,
            ).toBe(true);
          } else {
            expect(allows(port), `${role} → ${infraVar} port ${port}`).toBe(true);
          }
        }
        expect(allows(443), `${role} → 443`).toBe(role.startsWith("sender-") || role === "webhooks");
        if (role === "webhooks") {
          // Apps' endpoints: public addresses only, as the dispatcher's address guard.
          const blocks = egress.filter((r) => r.ports.some((p: any) => p.port === 443)).flatMap((r) => r.to);
          expect(blocks.map((b: any) => b.ipBlock.cidr)).toEqual(["0.0.0.0/0", "::/0"]);
          for (const b of blocks) {
            for (const range of ["10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "169.254.0.0/16", "fc00::/7"]) {
              if (range.includes(":") === b.ipBlock.cidr.includes(":")) expect(b.ipBlock.except).toContain(range);
            }
          }
        }
      }
    },
  );
});

describe("generated secrets", () => {
  it("the master key is 32 random bytes, the bootstrap key an hk_live_ key, the admin password 24 letters and digits, and their Secret survives uninstall", () => {
    const objs = objectsOf("defaults");
    const keys = byName(objs, "Secret", "herald-keys")!;
    expect(keys.metadata.annotations?.["helm.sh/resource-policy"]).toBe("keep");
    const data = Object.fromEntries(
      Object.entries(keys.data as Record<string, string>).map(([k, v]) => [k, Buffer.from(v, "base64").toString()]),
    );
    expect(Object.keys(data).sort()).toEqual([
      "HERALD_BOOTSTRAP_ADMIN_PASSWORD",
      "HERALD_BOOTSTRAP_API_KEY",
      "HERALD_MASTER_KEY",
    ]);
    expect(data.HERALD_BOOTSTRAP_ADMIN_PASSWORD).toMatch(/^[A-Za-z0-9]{24}$/);
    expect(Buffer.from(data.HERALD_MASTER_KEY!, "base64")).toHaveLength(32);
    expect(data.HERALD_MASTER_KEY).toMatch(/^[A-Za-z0-9+/]{43}=$/);
    expect(data.HERALD_BOOTSTRAP_API_KEY).toMatch(/^hk_live_[A-Za-z0-9]{32,256}$/);
  });

  it("given values are stored as given", async () => {
    const masterKey = Buffer.alloc(32, 7).toString("base64");
    const bootstrap = `hk_live_${"a1".repeat(20)}`;
    const objs = await render({ values: { masterKey: { value: masterKey }, bootstrapApiKey: { value: bootstrap } } });
    const data = byName(objs, "Secret", "herald-keys")!.data as Record<string, string>;
    expect(Buffer.from(data.HERALD_MASTER_KEY!, "base64").toString()).toBe(masterKey);
    expect(Buffer.from(data.HERALD_BOOTSTRAP_API_KEY!, "base64").toString()).toBe(bootstrap);
  });

  it("a master-key rotation: the active key's version in the ConfigMap, retired keys in the Secret as the process parses them", async () => {
    const [k1, k2, k3] = [1, 2, 3].map((n) => Buffer.alloc(32, n).toString("base64"));
    const objs = await render({
      values: {
        masterKey: {
          value: k3,
          version: 3,
          previous: {
            keys: [
              { version: 1, value: k1 },
              { version: 2, value: k2 },
            ],
          },
        },
      },
    });
    const credential = heraldDeployments(objs).find((d) => roleOf(d) === "credential")!;
    const env = containerEnv(objs, mainContainer(credential));
    expect(env.get("HERALD_MASTER_KEY_VERSION")).toMatchObject({ from: "configMap", value: "3" });
    expect(env.get("HERALD_MASTER_KEYS_PREVIOUS")).toMatchObject({ from: "secret", name: "herald-keys" });
    expect(envValue(env, "HERALD_MASTER_KEYS_PREVIOUS")).toBe(`1:${k1},2:${k2}`);
    const config = readEnv(credentialConfigSpec, Object.fromEntries([...env.keys()].map((k) => [k, envValue(env, k)])));
    expect(config.masterKeyVersion).toBe(3);
    expect(config.previousMasterKeys.map((k) => k.version)).toEqual([1, 2]);
    expect(sealedBoxOf(config).versions).toEqual([3, 1, 2]);
    // Only the credential and webhooks services get master keys.
    const sealers = ["credential", "webhooks"];
    for (const d of heraldDeployments(objs).filter((x) => !sealers.includes(roleOf(x)))) {
      const other = containerEnv(objs, mainContainer(d));
      expect(
        [...other.keys()].filter((k) => k.startsWith("HERALD_MASTER_KEY")),
        roleOf(d),
      ).toEqual([]);
    }
    // Without retired keys nothing is set, and the version defaults to 1.
    const plain = containerEnv(
      objectsOf("defaults"),
      mainContainer(heraldDeployments(objectsOf("defaults")).find((d) => roleOf(d) === "credential")!),
    );
    expect(plain.has("HERALD_MASTER_KEYS_PREVIOUS")).toBe(false);
    expect(envValue(plain, "HERALD_MASTER_KEY_VERSION")).toBe("1");
  });

  it("nothing is generated for secrets kept in the user's Secrets, nor a bootstrap key when it is off", async () => {
    for (const set of ["existing-secrets", "production-ha"]) {
      expect(ofKind(objectsOf(set), "Secret"), set).toEqual([]);
    }
    const off = await render({ values: { bootstrapApiKey: { enabled: false }, bootstrapAdmin: { enabled: false } } });
    expect(Object.keys(byName(off, "Secret", "herald-keys")!.data)).toEqual(["HERALD_MASTER_KEY"]);
    const credential = heraldDeployments(off).find((d) => roleOf(d) === "credential")!;
    expect(containerEnv(off, mainContainer(credential)).has("HERALD_BOOTSTRAP_API_KEY")).toBe(false);
    expect(containerEnv(off, mainContainer(credential)).has("HERALD_BOOTSTRAP_ADMIN_PASSWORD")).toBe(false);
    expect(containerEnv(off, mainContainer(credential)).has("HERALD_BOOTSTRAP_ADMIN_EMAIL")).toBe(false);
  });
});

describe("NOTES.txt", () => {
  async function notes(set: string): Promise<string> {
    const text = await renderText({ ...VALUE_SETS[set]!, notes: true });
    const [, after] = text.split(/^NOTES:\n/m);
    expect(after, "NOTES.txt renders").toBeDefined();
    return after!;
  }

  /** The command NOTES.txt gives, checked against what the credential container reads. */
  function expectApiKeyCommand(text: string, set: string) {
    const objs = objectsOf(set);
    const credential = heraldDeployments(objs).find((d) => roleOf(d) === "credential")!;
    const source = containerEnv(objs, mainContainer(credential)).get("HERALD_BOOTSTRAP_API_KEY");
    expect(source?.from).toBe("secret");
    if (source?.from !== "secret") return;
    expect(text).toContain(
      `kubectl -n ${VALUE_SETS[set]!.namespace} get secret ${source.name} -o jsonpath='{.data.${source.key}}' | base64 -d`,
    );
  }

  it("tells how to reach the gateway and read the first API key, and warns about the generated master key", async () => {
    const text = await notes("defaults");
    expectApiKeyCommand(text, "defaults");
    expect(text).toContain("kubectl -n default port-forward svc/herald-gateway 8080:8080");
    expect(text).toContain("http://127.0.0.1:8080/docs");
    expect(text).toMatch(/HERALD_MASTER_KEY was generated/);
    expect(text).toMatch(/NOTE: postgresql\.url is the chart's placeholder/);
  });

  it("names the user's own Secret and key for the API key, and the ingress URL", async () => {
    const text = await notes("existing-secrets");
    expectApiKeyCommand(text, "existing-secrets");
    expect(text).not.toMatch(/HERALD_MASTER_KEY was generated/);
    const ingress = await notes("ingress-tls");
    expect(ingress).toContain("https://push.example.com/v1");
    expect(ingress).toContain("https://api.example.org/v1");
  });

  it("warns while the bundled dev infrastructure is on, and says which sender is disabled", async () => {
    expect(await notes("dev")).toMatch(/WARNING: devInfra is ON/);
    expect(await notes("minimal")).not.toMatch(/devInfra is ON/);
    expect(await notes("no-webpush")).toMatch(/sender-webpush: DISABLED/);
  });
});

describe("roles", () => {
  it("the chart's components are exactly the roles the herald command runs", () => {
    const roles = heraldDeployments(objectsOf("defaults")).map(roleOf).sort();
    expect(roles).toEqual([...ROLE_NAMES].sort());
    expect(Object.keys(ENV_SPECS).sort()).toEqual([...ROLE_NAMES].sort());
    expect(Object.keys(SENDER_PLATFORM).sort()).toEqual(ROLE_NAMES.filter((r) => r.startsWith("sender-")).sort());
  });
});
