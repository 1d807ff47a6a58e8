import type { ClientHttp2Session } from "node:http2";
import type { DescService } from "@bufbuild/protobuf";
import { createClient, type Client, type Interceptor } from "@connectrpc/connect";
import { createGrpcTransport, Http2SessionManager } from "@connectrpc/connect-node";
import { tracingClientInterceptor } from "./tracing.js";

export interface RpcClient<S extends DescService> {
  client: Client<S>;
  close(): void;
}

/**
 * A gRPC client over one pooled HTTP/2 session. close() ends the session, which
 * otherwise stays up for minutes and keeps the process alive.
 */
export function createRpcClient<S extends DescService>(
  service: S,
  baseUrl: string,
  opts: { interceptors?: Interceptor[]; timeoutMs?: number } = {},
): RpcClient<S> {
  const sessionManager = new GoawaySafeSessionManager(baseUrl, { idleConnectionTimeoutMs: 60_000 });
  const transport = createGrpcTransport({
    baseUrl,
    sessionManager,
    interceptors: [tracingClientInterceptor(), ...(opts.interceptors ?? [])],
    defaultTimeoutMs: opts.timeoutMs ?? 10_000,
  });
  return { client: createClient(service, transport), close: () => sessionManager.abort() };
}

/**
 * connect-node's session manager, safe from a crash it has on a peer's graceful
 * shutdown. A server that stops (a rolling update of the registry) sends GOAWAY; on a
 * connection with no open stream the manager destroys it with an error, which Node
 * raises on the session only once its socket has closed. A request made in between
 * makes the manager connect again and first remove its listeners from the old session,
 * so that late error has no listener and ends the process (connect-es issue 1768, open
 * in connect-node 2.2). Each session this manager hands out keeps one listener of its
 * own that ignores errors: the manager's handling is unchanged while it listens, and a
 * session it has let go of can no longer take the process down.
 */
export class GoawaySafeSessionManager extends Http2SessionManager {
  private readonly guarded = new WeakSet<ClientHttp2Session>();

  override async request(...args: Parameters<Http2SessionManager["request"]>) {
    const stream = await super.request(...args);
    const session = stream.session as ClientHttp2Session | undefined;
    if (session && !this.guarded.has(session)) {
      this.guarded.add(session);
      session.on("error", ignoreLateError);
    }
    return stream;
  }
}

function ignoreLateError(): void {}
