import { defaultServerConditions } from "vite";
import { defineConfig } from "vitest/config";

// Workspace packages resolve to their TypeScript sources (the `herald-source` export
// condition), never to a stale dist/.
const conditions = ["herald-source", ...defaultServerConditions];

// Three levels (docs/contributing.md §Tests): unit tests beside the code (no I/O),
// integration tests per service against real PostgreSQL/NATS/Redis, end-to-end tests
// through the gateway's REST API with every process running.
//
// Two groups, one after the other: unit, integration and chart files two at a time (each
// integration file works in schemas and a NATS namespace of its own), then the end-to-end
// files alone, one at a time (each runs a whole stack and measures it).
const SHARED = { sequence: { groupOrder: 0 }, maxWorkers: 2 };
export default defineConfig({
  resolve: { conditions },
  ssr: { resolve: { conditions, externalConditions: ["herald-source"] } },
  test: {
    projects: [
      {
        extends: true,
        test: {
          ...SHARED,
          name: "unit",
          include: ["{packages,services,gateway}/**/src/**/*.test.ts", "scripts/**/*.test.ts"],
          exclude: ["**/node_modules/**"],
        },
      },
      {
        extends: true,
        test: {
          ...SHARED,
          name: "integration",
          include: ["{packages,services,gateway}/**/test/**/*.int.test.ts"],
          exclude: ["**/node_modules/**"],
          globalSetup: ["test/support/global-setup.ts"],
          testTimeout: 30_000,
          hookTimeout: 60_000,
        },
      },
      {
        extends: true,
        test: {
          sequence: { groupOrder: 1 },
          maxWorkers: 1,
          name: "e2e",
          include: ["test/e2e/**/*.e2e.test.ts"],
          globalSetup: ["test/support/global-setup.ts"],
          testTimeout: 120_000,
          hookTimeout: 120_000,
          fileParallelism: false,
          // A console page re-rendering after a reload (its session, then its data) can take
          // longer than expect.poll's default second on a loaded 2-core machine.
          expect: { poll: { timeout: 10_000 } },
        },
      },
      {
        // The Helm chart rendered (tools/helm-render, no cluster, no ports) and checked
        // against the Kubernetes schemas and what the code reads.
        extends: true,
        test: {
          ...SHARED,
          name: "chart",
          include: ["charts/**/test/**/*.test.ts"],
          testTimeout: 60_000,
          hookTimeout: 600_000,
        },
      },
    ],
  },
});
