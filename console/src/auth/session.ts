import { refresh, revoke, type TokenSet } from "./oauth";

/**
 * The signed-in session's tokens: kept in memory and in sessionStorage (this tab only,
 * gone when it closes; never localStorage), refreshed a minute before the access token
 * expires, and revoked on sign-out.
 */
const STORAGE_KEY = "herald.console.tokens";
const SIGNED_OUT_KEY = "herald.console.signedOut";
const REFRESH_AHEAD_MS = 60_000;

let tokens: TokenSet | undefined = load();
let refreshing: Promise<TokenSet | undefined> | undefined;
let timer: ReturnType<typeof setTimeout> | undefined;
const listeners = new Set<() => void>();

function load(): TokenSet | undefined {
  try {
    const raw = sessionStorage.getItem(STORAGE_KEY);
    return raw ? (JSON.parse(raw) as TokenSet) : undefined;
  } catch {
    return undefined;
  }
}

function store(next: TokenSet | undefined): void {
  tokens = next;
  if (next) sessionStorage.setItem(STORAGE_KEY, JSON.stringify(next));
  else sessionStorage.removeItem(STORAGE_KEY);
  schedule();
  for (const l of listeners) l();
}

function schedule(): void {
  clearTimeout(timer);
  if (!tokens?.refreshToken) return;
  const delay = Math.max(0, tokens.expiresAt - Date.now() - REFRESH_AHEAD_MS);
  timer = setTimeout(() => void refreshNow(), delay);
}

export function onSessionChange(listener: () => void): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

export function isSignedIn(): boolean {
  return tokens !== undefined;
}

export function signedIn(next: TokenSet): void {
  sessionStorage.removeItem(SIGNED_OUT_KEY);
  store(next);
}

/** One refresh at a time; undefined (and signed out) when the grant is gone. */
export function refreshNow(): Promise<TokenSet | undefined> {
  const current = tokens;
  if (!current?.refreshToken) return Promise.resolve(undefined);
  refreshing ??= refresh(current.refreshToken)
    .then(
      (next) => {
        store(next);
        return next;
      },
      () => {
        store(undefined);
        return undefined;
      },
    )
    .finally(() => {
      refreshing = undefined;
    });
  return refreshing;
}

/** A usable access token: refreshed first when it has (nearly) expired. */
export async function accessToken(): Promise<string | undefined> {
  if (!tokens) return undefined;
  if (tokens.expiresAt - Date.now() < 5_000) return (await refreshNow())?.accessToken;
  return tokens.accessToken;
}

/** Revokes the refresh token, then forgets everything; the next sign-in asks for the password. */
export async function signOut(): Promise<void> {
  const current = tokens;
  sessionStorage.setItem(SIGNED_OUT_KEY, "1");
  store(undefined);
  if (current?.refreshToken) await revoke(current.refreshToken).catch(() => undefined);
}

export function signedOutExplicitly(): boolean {
  return sessionStorage.getItem(SIGNED_OUT_KEY) === "1";
}

schedule();
