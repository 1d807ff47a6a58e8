import { createHash } from "node:crypto";

/**
 * The server-rendered pages of sign-in: plain HTML with one inline stylesheet allowed by
 * its hash, no script, nothing from another origin. Every value that reaches a page goes
 * through `escapeHtml`.
 */

const STYLE = `
:root{color-scheme:light dark;font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;line-height:1.5}
body{margin:0;background:#f4f5f7;color:#1a1b1e}
main{max-width:22rem;margin:10vh auto 2rem;padding:2rem;background:#fff;border-radius:8px;box-shadow:0 1px 3px rgba(0,0,0,.15)}
h1{font-size:1.4rem;margin:0 0 1rem}
p{margin:.5rem 0 1rem}
label{display:block;font-weight:600;margin:.75rem 0 .25rem}
input{box-sizing:border-box;width:100%;padding:.6rem;font:inherit;border:1px solid #6b7280;border-radius:4px;background:#fff;color:#1a1b1e}
input:focus,button:focus,a:focus{outline:3px solid #1c7ed6;outline-offset:2px}
button{margin-top:1.25rem;width:100%;padding:.65rem;font:inherit;font-weight:600;color:#fff;background:#1864ab;border:0;border-radius:4px;cursor:pointer}
button.secondary{background:transparent;color:#1864ab;border:1px solid #1864ab}
.error{padding:.6rem .8rem;border-radius:4px;background:#fff5f5;color:#a61e1e;border:1px solid #e03131}
.muted{color:#4b5563;font-size:.9rem}
a{color:#1864ab}
@media (prefers-color-scheme:dark){body{background:#141517;color:#e9ecef}main{background:#25262b}input{background:#1a1b1e;color:#e9ecef}.error{background:#3b1212;color:#ffc9c9}.muted{color:#adb5bd}a,button.secondary{color:#74c0fc;border-color:#74c0fc}}
`.trim();

const STYLE_HASH = `'sha256-${createHash("sha256").update(STYLE).digest("base64")}'`;

export function escapeHtml(value: string): string {
  return value.replace(
    /[&<>"']/g,
    (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c] as string,
  );
}

/**
 * The page's Content-Security-Policy. Forms may post to this origin and, since browsers
 * apply form-action to the redirects that follow a submission, to the origins an
 * authorization answer is redirected to (a CLI's loopback redirect URI, say).
 */
export function contentSecurityPolicy(formTargets: string[] = []): string {
  const targets = ["'self'", ...new Set(formTargets)].join(" ");
  return [
    "default-src 'none'",
    `style-src ${STYLE_HASH}`,
    `form-action ${targets}`,
    "frame-ancestors 'none'",
    "base-uri 'none'",
  ].join("; ");
}

/** Headers every page is sent with (beside its CSP). */
export const PAGE_HEADERS = {
  "content-type": "text/html; charset=utf-8",
  "cache-control": "no-store",
  "x-content-type-options": "nosniff",
  "x-frame-options": "DENY",
  "referrer-policy": "no-referrer",
} as const;

function layout(title: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>${escapeHtml(title)} · Herald</title>
<style>${STYLE}</style>
</head>
<body>
<main>
${body}
</main>
</body>
</html>
`;
}

const errorBox = (message: string | undefined) =>
  message ? `<p class="error" role="alert">${escapeHtml(message)}</p>` : "";

const hidden = (name: string, value: string) =>
  `<input type="hidden" name="${escapeHtml(name)}" value="${escapeHtml(value)}">`;

export interface SignInPage {
  action: string;
  csrf: string;
  clientName: string;
  email?: string;
  error?: string;
}

export function signInPage(p: SignInPage): string {
  return layout(
    "Sign in",
    `<h1>Sign in to Herald</h1>
<p class="muted">to continue to ${escapeHtml(p.clientName)}</p>
${errorBox(p.error)}
<form method="post" action="${escapeHtml(p.action)}" novalidate>
${hidden("csrf", p.csrf)}
<label for="email">Email</label>
<input id="email" name="email" type="email" autocomplete="username" required autofocus value="${escapeHtml(p.email ?? "")}">
<label for="password">Password</label>
<input id="password" name="password" type="password" autocomplete="current-password" required>
<button type="submit">Sign in</button>
</form>`,
  );
}

export interface ConsentPage {
  action: string;
  abortAction: string;
  csrf: string;
  clientName: string;
  orgName: string;
  email: string;
}

export function consentPage(p: ConsentPage): string {
  return layout(
    "Allow access",
    `<h1>Allow access?</h1>
<p><strong>${escapeHtml(p.clientName)}</strong> wants to use Herald as <strong>${escapeHtml(p.email)}</strong> in the organization <strong>${escapeHtml(p.orgName)}</strong>, with your role there.</p>
<form method="post" action="${escapeHtml(p.action)}">
${hidden("csrf", p.csrf)}
<button type="submit">Allow</button>
</form>
<form method="post" action="${escapeHtml(p.abortAction)}">
${hidden("csrf", p.csrf)}
<button type="submit" class="secondary">Cancel</button>
</form>`,
  );
}

export interface MessagePage {
  title: string;
  message: string;
  link?: { href: string; text: string };
  /** Shown as an alert rather than plain text. */
  isError?: boolean;
}

export function messagePage(p: MessagePage): string {
  const text = p.isError ? errorBox(p.message) : `<p>${escapeHtml(p.message)}</p>`;
  const link = p.link ? `<p><a href="${escapeHtml(p.link.href)}">${escapeHtml(p.link.text)}</a></p>` : "";
  return layout(p.title, `<h1>${escapeHtml(p.title)}</h1>\n${text}\n${link}`);
}

export interface InvitationPage {
  action: string;
  csrf: string;
  token: string;
  orgName: string;
  role: string;
  email: string;
  /** An existing user confirms with their password; a new one picks a name and password. */
  userExists: boolean;
  name?: string;
  error?: string;
}

export function invitationPage(p: InvitationPage): string {
  const nameField = p.userExists
    ? ""
    : `<label for="name">Name</label>
<input id="name" name="name" type="text" autocomplete="name" maxlength="200" value="${escapeHtml(p.name ?? "")}">`;
  const passwordHelp = p.userExists
    ? `<p class="muted" id="password-help">You already have an account: enter its password.</p>`
    : `<p class="muted" id="password-help">Choose a password for your new account.</p>`;
  return layout(
    "Accept invitation",
    `<h1>Join ${escapeHtml(p.orgName)}</h1>
<p>You were invited as <strong>${escapeHtml(p.email)}</strong> with the role <strong>${escapeHtml(p.role)}</strong>.</p>
${errorBox(p.error)}
<form method="post" action="${escapeHtml(p.action)}">
${hidden("csrf", p.csrf)}
${hidden("token", p.token)}
<input type="email" name="username" autocomplete="username" value="${escapeHtml(p.email)}" hidden readonly>
${nameField}
<label for="password">Password</label>
${passwordHelp}
<input id="password" name="password" type="password" aria-describedby="password-help" autocomplete="${p.userExists ? "current-password" : "new-password"}" required>
<button type="submit">Accept invitation</button>
</form>`,
  );
}

/** The end-session confirmation; `form` is oidc-provider's own (a hidden xsrf field). */
export function logoutPage(form: string): string {
  return layout(
    "Sign out",
    `<h1>Sign out of Herald?</h1>
${form}
<button type="submit" form="op.logoutForm" value="yes" name="logout">Sign out</button>
<button type="submit" form="op.logoutForm" class="secondary">Stay signed in</button>`,
  );
}
