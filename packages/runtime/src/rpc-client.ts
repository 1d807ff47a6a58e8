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
  const sessionManager = new Http2SessionManager(baseUrl, { idleConnectionTimeoutMs: 60_000 });
  const transport = createGrpcTransport({
    baseUrl,
    sessionManager,
    interceptors: [tracingClientInterceptor(), ...(opts.interceptors ?? [])],
    defaultTimeoutMs: opts.timeoutMs ?? 10_000,
  });
  return { client: createClient(service, transport), close: () => sessionManager.abort() };
}
