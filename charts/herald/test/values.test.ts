import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { Ajv } from "ajv";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { lintChart } from "../../../scripts/helm-render.mjs";
import {
  CHART_DIR,
  REPO_ROOT,
  type RenderOptions,
  deployValues,
  lintOptions,
  parseManifests,
  removeTempFiles,
  render,
  renderFailure,
  renderer,
} from "./chart-support.js";

// values.schema.json: what it accepts (values.yaml and the example values files, checked
// by ajv as well as by the renderer's gojsonschema), what it rejects with a message naming
// the value, the chart's own cross-value checks, `helm lint`, and that the committed schema
// is what hack/gen-schema.mjs generates.

const SCHEMA_FILE = path.join(CHART_DIR, "values.schema.json");
const VALUES_FILES = ["minimal.yaml", "production-ha.yaml", "dev.yaml"];

const readYaml = (file: string): Record<string, unknown> =>
  (parseManifests(readFileSync(file, "utf8"))[0] ?? {}) as Record<string, unknown>;

/** Helm's coalescing of a values file over the chart's values: maps merge, null deletes. */
function coalesce(base: Record<string, unknown>, over: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...base };
  for (const [k, v] of Object.entries(over)) {
    if (v === null) delete out[k];
    else if (isMap(v) && isMap(out[k])) out[k] = coalesce(out[k] as Record<string, unknown>, v);
    else out[k] = v;
  }
  return out;
}
const isMap = (v: unknown): v is Record<string, unknown> => !!v && typeof v === "object" && !Array.isArray(v);

const schema = JSON.parse(readFileSync(SCHEMA_FILE, "utf8")) as Record<string, unknown>;
const defaults = readYaml(path.join(CHART_DIR, "values.yaml"));
// strict: the schema must not rely on keywords or forms ajv would ignore.
const validate = new Ajv({ strict: true, allErrors: true }).compile(schema);
const ajvErrors = (values: unknown) =>
  validate(values) ? [] : (validate.errors ?? []).map((e) => `${e.instancePath || "/"} ${e.message}`);

beforeAll(async () => {
  await renderer();
});
afterAll(removeTempFiles);

describe("values.schema.json", () => {
  it("accepts the chart's values.yaml", () => {
    expect(ajvErrors(defaults)).toEqual([]);
  });

  it.each(VALUES_FILES)("accepts deploy/values/%s, alone and merged over values.yaml", (file) => {
    const values = readYaml(deployValues(file));
    expect(Object.keys(values).length).toBeGreaterThan(0);
    expect(ajvErrors(values)).toEqual([]);
    expect(ajvErrors(coalesce(defaults, values))).toEqual([]);
  });

  /** Bad values: the renderer must refuse them naming the path, and ajv must agree. */
  const REJECTED: [string, RenderOptions, string, Record<string, unknown>][] = [
    [
      "negative replicas of a component",
      { set: ["components.gateway.replicas=-1"] },
      "components.gateway.replicas",
      { components: { gateway: { replicas: -1 } } },
    ],
    [
      "negative default replicas",
      { set: ["defaults.replicas=-2"] },
      "defaults.replicas",
      { defaults: { replicas: -2 } },
    ],
    ["an unknown top-level key", { set: ["replicaCount=3"] }, "replicaCount", { replicaCount: 3 }],
    [
      "an unknown key inside a component",
      { set: ["components.senderFcm.replica=2"] },
      "components.senderFcm: Additional property replica",
      { components: { senderFcm: { replica: 2 } } },
    ],
    [
      "an unknown config setting of a component",
      { set: ["components.campaign.config.fanoutSize=10"] },
      "components.campaign.config: Additional property fanoutSize",
      { components: { campaign: { config: { fanoutSize: 10 } } } },
    ],
    [
      "a string where an integer is expected",
      { setString: ["components.credential.port=7003"] },
      "components.credential.port: Invalid type. Expected: integer, given: string",
      { components: { credential: { port: "7003" } } },
    ],
    [
      "a bad image.pullPolicy",
      { set: ["image.pullPolicy=Sometimes"] },
      "image.pullPolicy",
      { image: { pullPolicy: "Sometimes" } },
    ],
    [
      "a bad logLevel",
      { set: ["defaults.logLevel=verbose"] },
      "defaults.logLevel",
      { defaults: { logLevel: "verbose" } },
    ],
    [
      "a bad component logLevel",
      { set: ["components.senderApns.logLevel=warning"] },
      "components.senderApns.logLevel",
      { components: { senderApns: { logLevel: "warning" } } },
    ],
    [
      "a malformed bootstrap key",
      { set: ["bootstrapApiKey.value=hk_test_short"] },
      "bootstrapApiKey.value",
      { bootstrapApiKey: { value: "hk_test_short" } },
    ],
    [
      "a retired master key that is not 32 bytes, base64",
      {
        set: [
          "masterKey.previous.keys[0].version=2",
          `masterKey.previous.keys[0].value=${Buffer.alloc(16).toString("base64")}`,
        ],
      },
      "masterKey.previous.keys.0.value",
      { masterKey: { previous: { keys: [{ version: 2, value: Buffer.alloc(16).toString("base64") }] } } },
    ],
    [
      "a master key version out of the smallint range",
      { set: ["masterKey.version=40000"] },
      "masterKey.version",
      { masterKey: { version: 40000 } },
    ],
    [
      "KEDA scaling webhooks to zero (it serves the endpoints API)",
      { set: ["components.webhooks.autoscaling.keda.minReplicaCount=0"] },
      "components.webhooks.autoscaling.keda.minReplicaCount",
      { components: { webhooks: { autoscaling: { keda: { minReplicaCount: 0 } } } } },
    ],
    [
      "a due-deliveries trigger on a sender",
      { set: ["components.senderApns.autoscaling.keda.dueDeliveries.threshold=10"] },
      "components.senderApns.autoscaling.keda: Additional property dueDeliveries",
      { components: { senderApns: { autoscaling: { keda: { dueDeliveries: { threshold: 10 } } } } } },
    ],
    [
      "KEDA on a component that is neither a sender nor webhooks",
      { set: ["components.campaign.autoscaling.keda.enabled=true"] },
      "components.campaign.autoscaling: Additional property keda",
      { components: { campaign: { autoscaling: { keda: { enabled: true } } } } },
    ],
  ];

  it.each(REJECTED)("rejects %s: the render fails naming the value", async (_what, opts, message, values) => {
    const err = await renderFailure(opts);
    expect(err.exitCode).not.toBe(0);
    expect(err.stderr).toMatch(/values don't meet the specifications of the schema/);
    expect(err.stderr).toContain(message);
    expect(ajvErrors(coalesce(defaults, values)), "ajv agrees").not.toEqual([]);
  });

  it("the same values, well formed, render (the rejections are the values', not the paths')", async () => {
    // The same paths with good values render: the failures above are the values', not the paths'.
    const objs = await render({
      set: [
        "components.gateway.replicas=2",
        "defaults.replicas=1",
        "components.credential.port=7003",
        "image.pullPolicy=Always",
        "defaults.logLevel=warn",
        "components.senderApns.logLevel=error",
        "components.campaign.config.fanoutPageSize=10",
      ],
    });
    expect(objs.length).toBeGreaterThan(0);
  });
});

describe("the chart's own checks of contradictory values", () => {
  const [KEY_A, KEY_B] = [1, 2].map((n) => Buffer.alloc(32, n).toString("base64"));
  const REFUSED: [string, RenderOptions, RegExp][] = [
    [
      "a sender's grace period not longer than its drain + 5 s",
      { set: ["components.senderWebpush.config.drainMs=40000"] },
      /components\.senderWebpush: terminationGracePeriodSeconds \(40 s.*drainMs \(SENDER_DRAIN_MS, 40000 ms\) \+ 5 s/,
    ],
    [
      "a preStop sleep eating a sender's grace period",
      { set: ["components.senderFcm.preStopSleepSeconds=20"] },
      /components\.senderFcm: terminationGracePeriodSeconds \(40 s, of which preStopSleepSeconds 20 s\)/,
    ],
    [
      "a JWT issuer without a JWKS URL",
      { set: ["components.gateway.config.jwtIssuer=https://auth.example.com"] },
      /set jwtIssuer and jwtJwksUrl together/,
    ],
    [
      "a master key that is not 32 bytes",
      { set: [`masterKey.value=${Buffer.alloc(16).toString("base64")}`] },
      /masterKey\.value must be 32 random bytes/,
    ],
    [
      "a retired master key under the active version",
      {
        set: [
          "masterKey.version=2",
          "masterKey.previous.keys[0].version=2",
          `masterKey.previous.keys[0].value=${KEY_A}`,
        ],
      },
      /masterKey\.previous\.keys\[0\]\.version is 2, the active masterKey\.version/,
    ],
    [
      "a retired master key version listed twice",
      {
        set: [
          "masterKey.version=3",
          "masterKey.previous.keys[0].version=1",
          `masterKey.previous.keys[0].value=${KEY_A}`,
          "masterKey.previous.keys[1].version=1",
          `masterKey.previous.keys[1].value=${KEY_B}`,
        ],
      },
      /masterKey\.previous\.keys: version 1 is listed twice/,
    ],
    [
      "the active master key also listed as retired",
      {
        set: [
          `masterKey.value=${KEY_A}`,
          "masterKey.version=2",
          "masterKey.previous.keys[0].version=1",
          `masterKey.previous.keys[0].value=${KEY_A}`,
        ],
      },
      /masterKey\.previous\.keys\[0\] is the active masterKey\.value/,
    ],
    [
      "retired master keys both as values and from a Secret",
      {
        values: {
          masterKey: {
            version: 2,
            previous: { keys: [{ version: 1, value: Buffer.alloc(32, 1).toString("base64") }], existingSecret: "mine" },
          },
        },
      },
      /set masterKey\.previous\.keys or masterKey\.previous\.existingSecret, not both/,
    ],
    [
      "an HPA whose maximum is below its minimum",
      {
        set: ["components.campaign.autoscaling.hpa.enabled=true", "components.campaign.autoscaling.hpa.maxReplicas=1"],
      },
      /components\.campaign\.autoscaling\.hpa: maxReplicas is below minReplicas/,
    ],
    ["no URL for the infrastructure", { set: ["redis.url="] }, /redis\.url \(or redis\.existingSecret\) is required/],
  ];

  it.each(REFUSED)("refuses %s", async (_what, opts, message) => {
    const err = await renderFailure(opts);
    expect(err.exitCode).not.toBe(0);
    expect(err.stderr).toMatch(message);
  });
});

describe("helm lint", () => {
  it("passes with the chart's values", async () => {
    await expect(lintChart({ ...lintOptions({}), renderer: await renderer() })).resolves.toMatch(/0 chart\(s\) failed/);
  });

  it.each(VALUES_FILES)("passes with deploy/values/%s", async (file) => {
    const report = await lintChart({
      ...lintOptions({ valuesFiles: [deployValues(file)] }),
      apiVersions: ["monitoring.coreos.com/v1", "keda.sh/v1alpha1"],
      renderer: await renderer(),
    });
    expect(report).toMatch(/0 chart\(s\) failed/);
  });

  it("fails on values the schema rejects", async () => {
    await expect(
      lintChart({ ...lintOptions({ set: ["defaults.logLevel=loud"] }), renderer: await renderer() }),
    ).rejects.toThrow(/defaults\.logLevel/);
  });
});

describe("generated values.schema.json", () => {
  it("is exactly what hack/gen-schema.mjs generates (never edited by hand)", () => {
    const dir = mkdtempSync(path.join(tmpdir(), "herald-schema-"));
    try {
      const out = path.join(dir, "values.schema.json");
      const r = spawnSync(process.execPath, [path.join(CHART_DIR, "hack/gen-schema.mjs"), out], {
        cwd: REPO_ROOT,
        encoding: "utf8",
      });
      expect(r.status, r.stderr).toBe(0);
      expect(readFileSync(out, "utf8")).toBe(readFileSync(SCHEMA_FILE, "utf8"));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
