import { Button, Center, Paper, Stack, Text, TextInput, Title } from "@mantine/core";
import { createContext, useCallback, useContext, useEffect, useState, type ReactNode } from "react";
import { HeraldError, type Schemas, unwrap } from "@herald/client";
import { errorMessage, herald } from "../api/herald";
import { navigate, useLocation } from "../routing";
import { devApiKey, setDevApiKey } from "./dev-api-key";
import { completeSignIn, signInErrorMessage, startSignIn } from "./oauth";
import { isSignedIn, onSessionChange, signOut, signedIn, signedOutExplicitly } from "./session";

type Me = Schemas["Me"];

interface SessionValue {
  me: Me;
  signOut: () => Promise<void>;
}

const SessionContext = createContext<SessionValue | undefined>(undefined);

export function useSession(): SessionValue {
  const value = useContext(SessionContext);
  if (!value) throw new Error("useSession outside SessionProvider");
  return value;
}

type State =
  | { kind: "working"; what: string }
  | { kind: "signed-out" }
  | { kind: "failed"; message: string }
  | { kind: "ready"; me: Me };

/** Where the app starts: completes a sign-in, starts one, or loads who is signed in. */
export function SessionProvider({ children }: { children: ReactNode }) {
  const callback = useLocation().path === "/callback";
  const [state, setState] = useState<State>({ kind: "working", what: "Signing in" });
  const [generation, setGeneration] = useState(0);

  useEffect(() => onSessionChange(() => setGeneration((g) => g + 1)), []);

  // biome-ignore lint/correctness/useExhaustiveDependencies: generation re-establishes the session on sign-in and sign-out
  useEffect(() => {
    let cancelled = false;
    const set = (s: State) => !cancelled && setState(s);
    (async () => {
      if (callback) {
        set({ kind: "working", what: "Completing sign-in" });
        const { tokens, returnTo } = await completeSignIn(new URL(location.href));
        signedIn(tokens);
        navigate(returnTo, { replace: true });
        return;
      }
      if (!isSignedIn() && !(import.meta.env.DEV && devApiKey())) {
        if (signedOutExplicitly()) return set({ kind: "signed-out" });
        set({ kind: "working", what: "Redirecting to sign-in" });
        await startSignIn(currentPath());
        return;
      }
      set({ kind: "ready", me: await loadMe() });
    })().catch(async (err: unknown) => {
      if (err instanceof HeraldError && err.status === 401 && !callback) {
        await startSignIn(currentPath()).catch((e: unknown) => set({ kind: "failed", message: signInErrorMessage(e) }));
        return;
      }
      set({ kind: "failed", message: err instanceof HeraldError ? errorMessage(err) : signInErrorMessage(err) });
    });
    return () => {
      cancelled = true;
    };
  }, [generation, callback]);

  const doSignOut = useCallback(async () => {
    setDevApiKey(undefined);
    await signOut();
  }, []);

  if (state.kind === "ready") {
    return <SessionContext.Provider value={{ me: state.me, signOut: doSignOut }}>{children}</SessionContext.Provider>;
  }
  return <SessionScreen state={state} />;
}

function currentPath(): string {
  const p = location.pathname.replace(/^\/console/, "") || "/";
  return p === "/callback" ? "/" : p + location.search;
}

async function loadMe(): Promise<Me> {
  try {
    return unwrap(await herald.GET("/v1/me"));
  } catch (err) {
    // Development with an API key: /v1/me answers 403 to keys; act as an owner.
    if (import.meta.env.DEV && devApiKey() && err instanceof HeraldError && err.status === 403) {
      return {
        user: { id: "dev", email: "api-key@localhost", name: "API key (development)" },
        org: { id: "dev", name: "Development" },
        role: "owner",
        memberships: [],
      };
    }
    throw err;
  }
}

function SessionScreen({ state }: { state: Exclude<State, { kind: "ready" }> }) {
  return (
    <Center mih="100vh" p="md">
      <Paper withBorder shadow="sm" p="xl" maw={440} w="100%">
        <Stack>
          <Title order={1} size="h2">
            Herald console
          </Title>
          {state.kind === "working" && <Text role="status">{state.what}…</Text>}
          {state.kind === "signed-out" && <Text role="status">You are signed out.</Text>}
          {state.kind === "failed" && (
            <Text role="alert" c="red.8">
              Sign-in failed: {state.message}
            </Text>
          )}
          {state.kind !== "working" && (
            <Button onClick={() => void startSignIn("/", state.kind === "signed-out")}>Sign in</Button>
          )}
          {import.meta.env.DEV && state.kind !== "working" && <DevApiKeyForm />}
        </Stack>
      </Paper>
    </Center>
  );
}

/** Development build only (see dev-api-key.ts). */
function DevApiKeyForm() {
  const [key, setKey] = useState("");
  return (
    <form
      onSubmit={(e) => {
        e.preventDefault();
        setDevApiKey(key.trim());
        location.reload();
      }}
    >
      <Stack gap="xs">
        <TextInput label="API key (development only)" value={key} onChange={(e) => setKey(e.currentTarget.value)} />
        <Button type="submit" variant="default">
          Use API key
        </Button>
      </Stack>
    </form>
  );
}
