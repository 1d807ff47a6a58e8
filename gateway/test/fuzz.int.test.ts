import { randomBytes } from "node:crypto";
import fc from "fast-check";
import type { InjectOptions } from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fuzzParams, fuzzTimeout, reportFigures } from "../../test/support/fuzz-settings.js";
import type { JsonSchema } from "../../test/support/json-schema-arbitrary.js";
import { createTarget, makeMaterials, revokedKey, unlimitedOrgKey } from "./fuzz-fixtures.js";
import { contractViolations, type FuzzOperation, fuzzOperations, SchemaOracle } from "./fuzz-oracle.js";
import type { FuzzContext, FuzzRequest, FuzzTarget } from "./fuzz-parts.js";
import { anyRequest, refusedRequest } from "./fuzz-requests.js";
import type { Backends, TestGateway } from "./harness.js";
import { type OwnerStack, startOwnerStack } from "./owner-stack.js";

/**
 * REST fuzzing from the gateway's own OpenAPI document, against the real gateway and real
 * backends: every /v1 operation gets valid-ish, mutated and hostile input (fast-check,
 * seeded: test/support/fuzz-settings.ts). Every answer must keep the contract — a status
 * the document names, never a 5xx, the `{error, message}` body for errors, no stack
 * trace, path or secret — and requests that must be refused change nothing that can be
 * read back.
 */

const BODY_LIMIT = 64 * 1024;
let backends: Backends;
let gw: TestGateway;
let stack: OwnerStack;
let ops: FuzzOperation[];
let ctx: FuzzContext;
/** Resources whose state is compared around refused requests, and a second set the free fuzzing may change. */
let kept: FuzzTarget;
let scratch: FuzzTarget;
let ownerToken: string;
const secrets: string[] = [];
const figures = { requests: 0, "5xx": 0, "refused requests": 0, "state comparisons": 0 };
const statuses: Record<number, number> = {};

beforeAll(async () => {
  stack = await startOwnerStack({ rateLimitPerMinute: 1_000_000, bodyLimitBytes: BODY_LIMIT });
  ({ backends, gw } = stack);
  const { tokens, owner } = stack;
  ownerToken = owner.token;

  const doc = (await gw.app.inject({ url: "/openapi.json" })).json();
  ops = fuzzOperations(doc);
  const orgKey = await unlimitedOrgKey(gw, backends.bootstrapKey);
  const revoked = await revokedKey(gw, orgKey);
  const materials = makeMaterials();
  kept = await createTarget(gw, orgKey, owner, tokens, materials);
  scratch = await createTarget(gw, orgKey, owner, tokens, materials);
  ctx = {
    oracle: new SchemaOracle(doc),
    resolve: (ref) => doc.components.schemas[ref.split("/").pop()!] as JsonSchema,
    unknownKey: `hk_live_${randomBytes(20).toString("hex")}`,
    revokedKey: revoked,
    bodyLimit: BODY_LIMIT,
  };
  secrets.push(
    backends.bootstrapKey,
    orgKey,
    owner.token,
    owner.password,
    revoked,
    ...[kept, scratch].flatMap((t) => [t.credentials.appKey, t.credentials.clientKey]),
    // A stretch from inside each private key: any echo of it holds that.
    materials.apns.p8.slice(40, 90),
    materials.account.privateKeyPem.slice(100, 150),
    materials.vapid.privateKey,
  );
}, 120_000);

afterAll(async () => {
  reportFigures("gateway REST", { ...figures, statuses: JSON.stringify(statuses) });
  await stack?.stop();
});

/** Sends one request and checks its answer against the contract; throws what is wrong, else returns the status. */
async function send(req: FuzzRequest): Promise<number> {
  const res = await gw.app.inject({
    method: req.op.method as InjectOptions["method"],
    url: req.url,
    headers: req.headers,
    remoteAddress: req.remoteAddress,
    ...(req.payload !== undefined ? { payload: req.payload } : {}),
  });
  figures.requests++;
  if (res.statusCode >= 500) figures["5xx"]++;
  if (req.refusals.length > 0) figures["refused requests"]++;
  statuses[res.statusCode] = (statuses[res.statusCode] ?? 0) + 1;
  const problems = contractViolations(
    req.op,
    { status: res.statusCode, headers: res.headers, text: res.body },
    secrets,
    {
      mustReject: req.refusals.length > 0,
    },
  );
  if (problems.length > 0) {
    throw new Error(
      `${problems.join("; ")}\n  request: ${req.notes.join(" | ")}\n  must be refused: ${req.refusals.join(", ") || "no"}` +
        `\n  answer: ${res.statusCode} ${res.body.slice(0, 400)}`,
    );
  }
  return res.statusCode;
}

/** What the owner can read of `target` through every GET whose parameters it has fixtures for. */
async function readableState(target: FuzzTarget): Promise<Record<string, unknown>> {
  const reads = ops.flatMap((op) => {
    if (op.method !== "GET" || op.isPublic) return [];
    const collection = op.path.split("/")[2]!;
    const names = op.params.filter((p) => p.in === "path").map((p) => (p.name === "id" ? collection : p.name));
    if (!names.every((n) => target.fixtures[n])) return [];
    const path = op.path.replace(/\{(\w+)\}/g, (_, n: string) => target.fixtures[n === "id" ? collection : n]!);
    const query = op.params.some((p) => p.in === "query" && p.name === "app_id")
      ? `?app_id=${target.fixtures.app_id}`
      : "";
    return [
      gw.call("GET", `${path}${query}`, ownerToken).then((res) => {
        expect(res.status, `GET ${op.path}: ${res.text}`).toBe(200);
        return [op.path, res.body] as const;
      }),
    ];
  });
  return Object.fromEntries(await Promise.all(reads));
}

/** Mutating operations come up three times as often: they are where a refusal matters. */
const weighted = (pick: (op: FuzzOperation) => fc.Arbitrary<FuzzRequest>) =>
  fc.oneof(...ops.map((op) => ({ weight: op.method === "GET" ? 1 : 3, arbitrary: pick(op) })));

describe("REST fuzzing from /openapi.json", () => {
  it("refuses what must be refused, within the contract, and changes nothing", {
    timeout: fuzzTimeout(40_000),
  }, async () => {
    let before = await readableState(kept);
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          weighted((op) => refusedRequest(ctx, op, kept)),
          { minLength: 5, maxLength: 15 },
        ),
        async (batch) => {
          const answered: string[] = [];
          for (const req of batch) answered.push(`${await send(req)} ${req.notes.join(" | ")}`);
          const after = await readableState(kept);
          figures["state comparisons"]++;
          const was = before;
          before = after;
          expect(after, `state changed by one of:\n${answered.join("\n")}`).toEqual(was);
        },
      ),
      // A replay meets the state the failure left behind: shrinking could not narrow it down.
      { ...fuzzParams(12), endOnFailure: true },
    );
  });

  it("answers any request within the contract", { timeout: fuzzTimeout(40_000) }, async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          weighted((op) => anyRequest(ctx, op, scratch)),
          { minLength: 5, maxLength: 20 },
        ),
        async (batch) => {
          for (const req of batch) await send(req);
        },
      ),
      { ...fuzzParams(30), endOnFailure: true },
    );
  });
});
