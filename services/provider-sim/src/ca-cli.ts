import { ConfigError, readEnv } from "@herald/runtime/service";
import { ensureCertificates } from "./ca.js";
import { certSpec } from "./config.js";

/**
 * `tsx services/provider-sim/src/ca-cli.ts`: makes sure the simulator's CA and server
 * certificate exist (SIM_CERT_DIR, SIM_CERT_HOSTS) and prints the CA file's path, for
 * NODE_EXTRA_CA_CERTS. Dev mode and `npm test` run it before starting anything else.
 */
try {
  const { certDir, certHosts } = readEnv(certSpec);
  const certs = await ensureCertificates(certDir, { hosts: certHosts });
  process.stdout.write(`${certs.caCertPath}\n`);
} catch (err) {
  process.stderr.write(`provider-sim ca: ${err instanceof ConfigError ? err.message : String(err)}\n`);
  process.exit(1);
}
