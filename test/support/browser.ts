import { existsSync, mkdtempSync, rmSync } from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { chromium, type BrowserContext } from "playwright-core";

/**
 * Browser tests drive Debian's Chromium (never a downloaded browser) through
 * playwright-core; .ci/run installs it with apt-get when it is missing.
 */
export const CHROMIUM = "/usr/bin/chromium";

const ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

export interface Browser {
  context: BrowserContext;
  close(): Promise<void>;
}

/** Chromium with a fresh profile, removed again on close. */
export async function launchChromium(
  opts: { viewport?: { width: number; height: number }; locale?: string; timezoneId?: string } = {},
): Promise<Browser> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(
      `Chromium is missing at ${CHROMIUM}: install it with \`sudo apt-get install chromium\` (.ci/run does this)`,
    );
  }
  const profile = mkdtempSync(path.join(os.tmpdir(), "herald-chromium-"));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: ARGS,
    viewport: opts.viewport ?? { width: 1280, height: 900 },
    ...(opts.locale ? { locale: opts.locale } : {}),
    ...(opts.timezoneId ? { timezoneId: opts.timezoneId } : {}),
  });
  return {
    context,
    close: async () => {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

export interface PublicAddress {
  /** http://127.0.0.1:<port>: give it to the gateway as HERALD_PUBLIC_URL before it starts. */
  url: string;
  /** Where connections go: the gateway, once it is listening. */
  forwardTo(url: string): void;
  close(): Promise<void>;
}

/**
 * A TCP forwarder standing in for the ingress: the gateway's public URL (its OAuth issuer
 * and the console's origin) must be known before the gateway starts, while the test stack
 * picks the gateway's own port when it starts it.
 */
export async function publicAddress(): Promise<PublicAddress> {
  let target: { host: string; port: number } | undefined;
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    sockets.add(client);
    client.on("close", () => sockets.delete(client));
    if (!target) return client.destroy();
    const upstream = net.connect(target.port, target.host);
    sockets.add(upstream);
    upstream.on("close", () => sockets.delete(upstream));
    client.pipe(upstream).pipe(client);
    client.on("error", () => upstream.destroy());
    upstream.on("error", () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as net.AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    forwardTo: (url) => {
      const u = new URL(url);
      target = { host: u.hostname, port: Number(u.port) };
    },
    close: () =>
      new Promise((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
