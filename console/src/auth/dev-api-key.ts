/**
 * Development only (`vite` dev server): an API key typed into the sign-in screen stands in
 * for the session while working on pages. `import.meta.env.DEV` is false in the production
 * build, where every use of this module is removed: the shipped console signs in with OAuth.
 */
const KEY = "herald.console.devApiKey";

export function devApiKey(): string | undefined {
  if (!import.meta.env.DEV) return undefined;
  return sessionStorage.getItem(KEY) ?? undefined;
}

export function setDevApiKey(key: string | undefined): void {
  if (!import.meta.env.DEV) return;
  if (key) sessionStorage.setItem(KEY, key);
  else sessionStorage.removeItem(KEY);
}
