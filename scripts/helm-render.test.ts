import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RenderError, type Renderer, ensureRenderer, lintChart, renderChart } from "./helm-render.mjs";

// tools/helm-render, the Go stand-in for `helm template`/`helm lint`, on throwaway charts.
// The Go renderer is what is under test, so a helm on PATH is not used. In CI the Debian
// packages it builds from are installed when missing.
let renderer: Renderer;
const dirs: string[] = [];

beforeAll(async () => {
  renderer = await ensureRenderer({ install: process.env.CI === "true", preferHelm: false });
}, 600_000);
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** Writes a chart named "demo" (plus any extra files) to a temp dir. */
function chart(files: Record<string, string>): string {
  const dir = mkdtempSync(path.join(tmpdir(), "herald-chart-"));
  dirs.push(dir);
  const all = { "Chart.yaml": "apiVersion: v2\nname: demo\nversion: 0.1.0\nappVersion: 1.2.3\n", ...files };
  for (const [name, text] of Object.entries(all)) {
    mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
    writeFileSync(path.join(dir, name), text);
  }
  return dir;
}

/** The rendered documents of one template, by its chart-relative path. */
function source(out: string, file: string): string[] {
  return out
    .split(/^---\n/m)
    .filter((d) => d.startsWith(`# Source: demo/${file}\n`))
    .map((d) => d.slice(`# Source: demo/${file}\n`.length).trimEnd());
}

const render = (opts: Omit<Parameters<typeof renderChart>[0], "renderer">) => renderChart({ ...opts, renderer });

async function renderError(opts: Parameters<typeof render>[0]): Promise<RenderError> {
  const err = await render(opts).then(
    () => undefined,
    (e: RenderError) => e,
  );
  if (!err) throw new Error("expected the render to fail");
  return err;
}

describe("helm-render", () => {
  it("merges values.yaml, -f files in order, --set and --set-string like helm", async () => {
    const dir = chart({
      "values.yaml": "a: 1\nbig: 1000000\nnested: {x: 1, w: 2}\ngone: {k: v}\nlist: [1, 2]\nkeep: true\n",
      "first.yaml": "a: 2\nnested: {w: 3}\nlist: [9]\n",
      "second.yaml": "a: 3\ngone: null\nnested: {z: 4}\n",
      "templates/values.yaml": "{{ toJson .Values }}\n",
    });
    const out = await render({
      chartDir: dir,
      valuesFiles: [path.join(dir, "first.yaml"), path.join(dir, "second.yaml")],
      set: ["b=true,c=42,zero=0,octal=007,n=null,esc=a\\,b", "arr[1].name=n,tags={x,2}", "nested.x=null"],
      setString: ["s=123,t=true"],
    });
    const [doc] = source(out, "templates/values.yaml");
    expect(JSON.parse(doc ?? "")).toEqual({
      a: 3,
      big: 1000000,
      nested: { w: 3, z: 4 },
      list: [9],
      keep: true,
      b: true,
      c: 42,
      zero: 0,
      octal: "007",
      n: null,
      esc: "a,b",
      arr: [null, { name: "n" }],
      tags: ["x", 2],
      s: "123",
      t: "true",
    });
  });

  it("renders include + nindent + toYaml and tpl, and skips partials", async () => {
    const dir = chart({
      "values.yaml":
        'greeting: "hello {{ .Release.Name }} in {{ .Release.Namespace }}"\nresources: {limits: {memory: 1Gi, cpu: "1"}}\n',
      "templates/_helpers.tpl":
        '{{- define "demo.labels" -}}\napp: {{ .Chart.Name }}\nrelease: {{ .Release.Name }}\n{{- end }}\n',
      "templates/cm.yaml": [
        "apiVersion: v1",
        "kind: ConfigMap",
        "metadata:",
        "  name: {{ .Release.Name }}",
        "  labels:",
        '    {{- include "demo.labels" . | nindent 4 }}',
        "data:",
        "  greeting: {{ tpl .Values.greeting . | quote }}",
        "  resources: |",
        "    {{- toYaml .Values.resources | nindent 4 }}",
        "  version: {{ .Chart.AppVersion | quote }}",
        "",
      ].join("\n"),
    });
    const out = await render({ chartDir: dir, namespace: "push" });
    expect(out).not.toContain("_helpers.tpl");
    expect(source(out, "templates/cm.yaml")).toEqual([
      [
        "apiVersion: v1",
        "kind: ConfigMap",
        "metadata:",
        "  name: herald",
        "  labels:",
        "    app: demo",
        "    release: herald",
        "data:",
        '  greeting: "hello herald in push"',
        "  resources: |",
        "    limits:",
        '      cpu: "1"',
        "      memory: 1Gi",
        '  version: "1.2.3"',
      ].join("\n"),
    ]);
  });

  it("fails on required with its message, template and line", async () => {
    const dir = chart({ "templates/a.yaml": 'name: {{ required "image.tag is required" .Values.image }}\n' });
    const err = await renderError({ chartDir: dir });
    expect(err.exitCode).toBe(1);
    expect(err.stderr).toContain("execution error at (demo/templates/a.yaml:1:9): image.tag is required");
    await expect(render({ chartDir: dir, set: ["image=x"] })).resolves.toContain("name: x");
  });

  it("fails on fail", async () => {
    const dir = chart({ "templates/a.yaml": '{{ if not .Values.ok }}{{ fail "set ok=true" }}{{ end }}\nok: yes\n' });
    const err = await renderError({ chartDir: dir });
    expect(err.exitCode).toBe(1);
    expect(err.stderr).toMatch(/execution error at \(demo\/templates\/a\.yaml:1:\d+\): set ok=true/);
  });

  it("validates values against values.schema.json", async () => {
    const schema = {
      $schema: "http://json-schema.org/draft-07/schema#",
      type: "object",
      additionalProperties: false,
      required: ["replicas"],
      properties: {
        replicas: { type: "integer", minimum: 0 },
        mode: { enum: ["a", "b"] },
        port: { $ref: "#/definitions/port" },
      },
      definitions: { port: { type: "integer", maximum: 65535 } },
    };
    const dir = chart({
      "values.yaml": "replicas: 1\n",
      "values.schema.json": JSON.stringify(schema),
      "templates/a.yaml": "replicas: {{ .Values.replicas }}\n",
    });
    await expect(render({ chartDir: dir, set: ["port=80"] })).resolves.toContain("replicas: 1");
    const cases: [string[], string[], string][] = [
      [["extra=1"], [], "- (root): Additional property extra is not allowed"],
      [["replicas=-1"], [], "- replicas: Must be greater than or equal to 0"],
      [[], ["replicas=2"], "- replicas: Invalid type. Expected: integer, given: string"],
      [["port=70000"], [], "- port: Must be less than or equal to 65535"],
      [["mode=c"], [], '- mode: mode must be one of the following: "a", "b"'],
      [["replicas=null"], [], "- (root): replicas is required"],
    ];
    for (const [set, setString, message] of cases) {
      const err = await renderError({ chartDir: dir, set, setString });
      expect(err.exitCode).toBe(1);
      expect(err.stderr).toContain(
        "values don't meet the specifications of the schema(s) in the following chart(s):\ndemo:\n",
      );
      expect(err.stderr).toContain(message);
    }
  });

  it("exposes .Capabilities, .Release and an empty lookup", async () => {
    const dir = chart({
      "templates/caps.yaml": [
        "kube: {{ .Capabilities.KubeVersion.Version }}",
        'apps: {{ .Capabilities.APIVersions.Has "apps/v1" }}',
        'monitoring: {{ .Capabilities.APIVersions.Has "monitoring.coreos.com/v1" }}',
        'kind: {{ .Capabilities.APIVersions.Has "monitoring.coreos.com/v1/ServiceMonitor" }}',
        "release: {{ .Release.Name }}/{{ .Release.Namespace }}/{{ .Release.Service }}/{{ .Release.IsInstall }}/{{ .Release.Revision }}",
        'lookup: {{ lookup "v1" "Secret" .Release.Namespace "missing" | toJson }}',
        'found: {{ if lookup "v1" "Secret" .Release.Namespace "missing" }}yes{{ else }}no{{ end }}',
        "",
      ].join("\n"),
    });
    const plain = source(await render({ chartDir: dir, namespace: "push" }), "templates/caps.yaml")[0];
    expect(plain).toBe(
      [
        "kube: v1.31.0",
        "apps: true",
        "monitoring: false",
        "kind: false",
        "release: herald/push/Helm/true/1",
        "lookup: {}",
        "found: no",
      ].join("\n"),
    );
    const out = await render({
      chartDir: dir,
      releaseName: "r",
      apiVersions: ["monitoring.coreos.com/v1", "monitoring.coreos.com/v1/ServiceMonitor"],
      kubeVersion: "1.30.2",
    });
    const withCrds = source(out, "templates/caps.yaml")[0];
    expect(withCrds).toContain("kube: v1.30.2\n");
    expect(withCrds).toContain("monitoring: true\nkind: true\n");
    expect(withCrds).toContain("release: r/default/");
  });

  it("prints NOTES.txt only with notes: true", async () => {
    const dir = chart({
      "templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\n",
      "templates/NOTES.txt": "Installed {{ .Release.Name }}.\n",
    });
    const without = await render({ chartDir: dir });
    expect(without).not.toContain("NOTES");
    expect(without).not.toContain("Installed");
    const withNotes = await render({ chartDir: dir, notes: true });
    expect(withNotes.endsWith("NOTES:\nInstalled herald.\n")).toBe(true);
  });

  it("orders documents like helm: install order by kind, hooks last", async () => {
    const dir = chart({
      "templates/a-deploy.yaml": "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d\n",
      "templates/b-job.yaml":
        "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: migrate\n  annotations:\n    helm.sh/hook: pre-install\n",
      "templates/c-svc.yaml":
        "apiVersion: v1\nkind: Service\nmetadata:\n  name: s\n---\napiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: sa\n",
      "templates/empty.yaml": "{{- if false }}\nkind: Never\n{{- end }}\n",
    });
    const out = await render({ chartDir: dir });
    const order = [...out.matchAll(/^kind: (\w+)$/gm)].map((m) => m[1]);
    expect(order).toEqual(["ServiceAccount", "Service", "Deployment", "Job"]);
    expect(out.startsWith("---\n# Source: demo/templates/c-svc.yaml\napiVersion: v1\nkind: ServiceAccount\n")).toBe(
      true,
    );
    expect(out).not.toContain("empty.yaml");
  });

  it("lints: passes a sound chart, catches a document without kind", async () => {
    const good = chart({ "templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\n" });
    await expect(lintChart({ chartDir: good, renderer })).resolves.toContain("1 chart(s) linted, 0 chart(s) failed");

    const bad = chart({
      "templates/cm.yaml":
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\n---\napiVersion: v1\nmetadata:\n  name: nokind\n",
    });
    const err: RenderError = await lintChart({ chartDir: bad, renderer }).then(
      () => {
        throw new Error("expected lint to fail");
      },
      (e: RenderError) => e,
    );
    expect(err.exitCode).toBe(1);
    expect(err.stdout).toContain("[ERROR] templates/cm.yaml (document 2): object has no kind");
    expect(err.stderr).toContain("1 chart(s) linted, 1 chart(s) failed");

    const badChart = chart({ "Chart.yaml": "apiVersion: v1\nname: demo\nversion: one\n" });
    const chartErr = await lintChart({ chartDir: badChart, renderer }).catch((e: RenderError) => e);
    expect(String(chartErr)).toContain(`[ERROR] Chart.yaml: apiVersion 'v1' is not valid. The value must be "v2"`);
    expect(String(chartErr)).toContain("[ERROR] Chart.yaml: version 'one' is not a valid SemVer");
  });
});
