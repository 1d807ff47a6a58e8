import react from "@vitejs/plugin-react";
import { defaultClientConditions, defineConfig } from "vite";

/**
 * The console is served by the gateway under /console (gateway/src/plugins/console.ts).
 * `html.cspNonce` leaves this placeholder on the built page's tags and in a
 * `<meta property="csp-nonce">`; the gateway replaces it with a fresh nonce per request,
 * and Mantine's style tags take it from that meta tag (src/nonce.ts).
 */
export const CSP_NONCE_PLACEHOLDER = "HERALD_CSP_NONCE";

const gateway = process.env.HERALD_GATEWAY_URL ?? "http://127.0.0.1:8080";

export default defineConfig({
  base: "/console/",
  plugins: [react()],
  // Workspace packages (@herald/client) are bundled from their TypeScript sources.
  resolve: { conditions: ["herald-source", ...defaultClientConditions] },
  html: { cspNonce: CSP_NONCE_PLACEHOLDER },
  build: { outDir: "dist", emptyOutDir: true, target: "es2022" },
  // `npm run dev -w @herald/console`: the API and the issuer stay on the gateway.
  server: {
    proxy: Object.fromEntries(["/v1", "/oauth", "/.well-known"].map((p) => [p, { target: gateway }])),
  },
});
