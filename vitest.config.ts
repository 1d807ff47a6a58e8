import { defineConfig } from "vitest/config";

// Three levels (STYLE.md): unit tests beside the code (no I/O), integration tests per
// service against real PostgreSQL/NATS/Redis, end-to-end tests through the gateway's
// REST API with every process running.
export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: "unit",
          include: ["{packages,services,gateway}/**/src/**/*.test.ts", "scripts/**/*.test.ts"],
          exclude: ["**/node_modules/**"],
        },
      },
      {
        test: {
          name: "integration",
          include: ["{packages,services,gateway}/**/test/**/*.int.test.ts"],
          exclude: ["**/node_modules/**"],
          globalSetup: ["test/support/global-setup.ts"],
          testTimeout: 30_000,
          hookTimeout: 60_000,
        },
      },
      {
        test: {
          name: "e2e",
          include: ["test/e2e/**/*.e2e.test.ts"],
          globalSetup: ["test/support/global-setup.ts"],
          testTimeout: 120_000,
          hookTimeout: 120_000,
          fileParallelism: false,
        },
      },
    ],
  },
});
