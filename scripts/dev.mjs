#!/usr/bin/env node
// `npm run dev`: Herald from its TypeScript sources under tsx, on one machine. Installs
// what is missing, builds the console when stale, starts the infrastructure when it is
// installed but stopped, runs every Herald process with the provider simulator, and prints
// the URLs, a working API key and the console's admin sign-in. `npm start` is the same from
// the production build: both run through scripts/start.mjs (runHerald).
import { main } from "./start.mjs";

main("source");
