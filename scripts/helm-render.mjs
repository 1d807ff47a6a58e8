// Renders and lints Helm charts with `helm` when it is installed, otherwise with
// tools/helm-render: a small Go program on Helm's own engine (text/template + sprig),
// built from Debian's Go packages because no helm binary can be installed here.
// As a CLI: node scripts/helm-render.mjs [--install] [--lint] [NAME] CHART [helm template flags]
import { spawn } from "node:child_process";
import { aptInstall, which } from "./debian-packages.mjs";
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync, statSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const srcDir = path.join(root, "tools/helm-render");
const cacheDir = path.join(root, "node_modules/.cache/herald");
const binPath = path.join(cacheDir, "helm-render");

/** Debian packages that build tools/helm-render (Go, sprig and the libraries Helm 3 uses). */
export const APT_PACKAGES = [
  "golang-go",
  "golang-github-masterminds-sprig-dev",
  "golang-github-ghodss-yaml-dev",
  "golang-github-xeipuuv-gojsonschema-dev",
  "golang-github-burntsushi-toml-dev",
  "golang-github-gobwas-glob-dev",
];
const GOPATH = "/usr/share/gocode";
const GO_SOURCES = [
  "github.com/Masterminds/sprig",
  "github.com/ghodss/yaml",
  "github.com/xeipuuv/gojsonschema",
  "github.com/BurntSushi/toml",
  "github.com/gobwas/glob",
];
const INSTALL_HINT = `apt-get update && apt-get install -y ${APT_PACKAGES.join(" ")}`;

/** Runs a command; resolves { code, stdout, stderr } (never rejects on a non-zero exit). */
function run(cmd, args, options = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { ...options, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (d) => (stdout += d));
    child.stderr.setEncoding("utf8").on("data", (d) => (stderr += d));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code: code ?? 1, stdout, stderr }));
  });
}

async function mustRun(cmd, args, options) {
  const r = await run(cmd, args, options);
  if (r.code !== 0) throw new Error(`${cmd} ${args.join(" ")} failed (exit ${r.code}): ${r.stderr.trim()}`);
  return r;
}

const findGo = () => which("go") ?? (existsSync("/usr/lib/go/bin/go") ? "/usr/lib/go/bin/go" : undefined);
const haveSources = () => GO_SOURCES.every((p) => existsSync(path.join(GOPATH, "src", p)));

function newestSource() {
  return Math.max(
    ...readdirSync(srcDir)
      .filter((f) => f.endsWith(".go") && !f.endsWith("_test.go"))
      .map((f) => statSync(path.join(srcDir, f)).mtimeMs),
  );
}

let building;

/**
 * The renderer to use: `{ kind: "helm", bin: "helm" }` when helm is on PATH (unless
 * preferHelm is false), else `{ kind: "helm-render", bin }`, built with `go build` into
 * node_modules/.cache/herald when missing or older than a tools/helm-render/*.go file.
 * Missing Go or Go sources: installed with apt-get when `install` (or
 * HERALD_INSTALL_TOOLS=1), otherwise an Error naming the apt-get command.
 */
export async function ensureRenderer({ install = false, preferHelm = true } = {}) {
  if (preferHelm && which("helm")) return { kind: "helm", bin: "helm" };
  building ??= buildRenderer(install || process.env.HERALD_INSTALL_TOOLS === "1").finally(() => {
    building = undefined;
  });
  return { kind: "helm-render", bin: await building };
}

async function buildRenderer(install) {
  if (existsSync(binPath) && statSync(binPath).mtimeMs >= newestSource()) return binPath;
  if (!findGo() || !haveSources()) {
    if (!install) {
      throw new Error(
        `helm-render needs Go and Debian's Go sources: run \`${INSTALL_HINT}\` (or set HERALD_INSTALL_TOOLS=1)`,
      );
    }
    aptInstall(APT_PACKAGES);
  }
  const go = findGo();
  if (!go) throw new Error(`go is still missing after installing: run \`${INSTALL_HINT}\``);
  mkdirSync(cacheDir, { recursive: true });
  // GOPATH mode against Debian's /usr/share/gocode: nothing is downloaded.
  const env = {
    ...process.env,
    GO111MODULE: "off",
    GOPATH,
    GOPROXY: "off",
    GOTOOLCHAIN: "local",
    GOCACHE: process.env.GOCACHE ?? path.join(cacheDir, "go-build"),
  };
  delete env.GOFLAGS;
  // Build beside the target and rename, so concurrent builds never expose a partial binary.
  const tmp = `${binPath}.${process.pid}.tmp`;
  try {
    await mustRun(go, ["build", "-o", tmp, "."], { cwd: srcDir, env });
    renameSync(tmp, binPath);
  } finally {
    rmSync(tmp, { force: true });
  }
  return binPath;
}

function valueArgs({ valuesFiles = [], set = [], setString = [] }) {
  return [
    ...valuesFiles.flatMap((f) => ["-f", f]),
    ...set.flatMap((s) => ["--set", s]),
    ...setString.flatMap((s) => ["--set-string", s]),
  ];
}

function failure(r, what, output) {
  const err = new Error(`${what} failed (exit ${r.code}):\n${output.trim()}`);
  Object.assign(err, { exitCode: r.code, stdout: r.stdout, stderr: r.stderr });
  return err;
}

/**
 * Renders a chart like `helm template` and resolves to the multi-document YAML; with
 * `notes`, the chart's NOTES.txt follows under a `NOTES:` line. Rejects with an Error
 * carrying the renderer's stderr (also as err.stderr, with err.exitCode).
 */
export async function renderChart({
  chartDir,
  releaseName = "herald",
  namespace = "default",
  valuesFiles = [],
  set = [],
  setString = [],
  apiVersions = [],
  kubeVersion,
  notes = false,
  renderer,
}) {
  const r0 = renderer ?? (await ensureRenderer());
  const common = commonArgs({ namespace, valuesFiles, set, setString, kubeVersion });
  const apis = apiVersions.flatMap((a) => ["--api-versions", a]);
  if (r0.kind === "helm-render") {
    const r = await run(r0.bin, ["--name", releaseName, ...common, ...apis, ...(notes ? ["--notes"] : []), chartDir]);
    if (r.code !== 0) throw failure(r, "helm-render", r.stderr);
    return r.stdout;
  }
  const r = await run(r0.bin, ["template", releaseName, chartDir, ...common, ...apis]);
  if (r.code !== 0) throw failure(r, "helm template", r.stderr);
  if (!notes) return r.stdout;
  // `helm template` never prints NOTES.txt; a client-side dry-run install does.
  const n = await run(r0.bin, ["install", releaseName, chartDir, "--dry-run=client", ...common, ...apis]);
  if (n.code !== 0) throw failure(n, "helm install --dry-run", n.stderr);
  const text = n.stdout.split(/^NOTES:\n/m)[1]?.trim();
  return text ? `${r.stdout}NOTES:\n${text}\n` : r.stdout;
}

/** Namespace, values and Kubernetes version flags: the same for helm and helm-render. */
function commonArgs({ namespace, valuesFiles, set, setString, kubeVersion }) {
  return [
    "--namespace",
    namespace,
    ...valueArgs({ valuesFiles, set, setString }),
    ...(kubeVersion ? ["--kube-version", kubeVersion] : []),
  ];
}

/**
 * Lints a chart (`helm-render --lint`, or `helm lint`): resolves to the report when it
 * passes, rejects with an Error holding the report and stderr otherwise.
 */
export async function lintChart({
  chartDir,
  releaseName,
  namespace = "default",
  valuesFiles = [],
  set = [],
  setString = [],
  apiVersions = [],
  kubeVersion,
  renderer,
}) {
  const r0 = renderer ?? (await ensureRenderer());
  const common = commonArgs({ namespace, valuesFiles, set, setString, kubeVersion });
  const r =
    r0.kind === "helm-render"
      ? await run(r0.bin, [
          "--lint",
          ...(releaseName ? ["--name", releaseName] : []),
          ...common,
          ...apiVersions.flatMap((a) => ["--api-versions", a]),
          chartDir,
        ])
      : await run(r0.bin, ["lint", chartDir, ...common]);
  if (r.code !== 0)
    throw failure(r, r0.kind === "helm" ? "helm lint" : "helm-render --lint", `${r.stdout}\n${r.stderr}`);
  return r.stdout;
}

// CLI: everything but --install goes to the renderer unchanged (`helm template`
// or `helm lint` with a real helm, whose flags are the same for the common cases).
if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2);
  const install = args.includes("--install");
  const rest = args.filter((a) => a !== "--install");
  try {
    const r0 = await ensureRenderer({ install });
    let argv = rest;
    if (r0.kind === "helm")
      argv = rest.includes("--lint") ? ["lint", ...rest.filter((a) => a !== "--lint")] : ["template", ...rest];
    const child = spawn(r0.bin, argv, { stdio: "inherit" });
    child.on("close", (code) => process.exit(code ?? 1));
  } catch (err) {
    console.error(err instanceof Error ? err.message : err);
    process.exit(1);
  }
}
