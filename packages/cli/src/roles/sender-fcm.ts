// The sender-fcm role and the runtime that runs it, one module: the production build bundles
// each role's module into a file of its own (scripts/bundle.mjs).
import { runService } from "@herald/runtime";
import { serviceRole } from "@herald/sender-fcm/service-role";

export const start = (opts: { onStop: () => Promise<void> }) => runService(serviceRole, opts);
