/**
 * The CSP nonce of this page load. The gateway renders index.html per request with a
 * fresh nonce (gateway/src/plugins/console.ts) in `<meta property="csp-nonce">`; Mantine
 * puts it on the `<style>` tags it adds, which the strict style-src then allows.
 * Browsers hide nonce attributes from getAttribute, so it is read as the `nonce` property.
 */
export function styleNonce(): string {
  const meta = document.querySelector<HTMLMetaElement>('meta[property="csp-nonce"]');
  return meta?.nonce || meta?.getAttribute("nonce") || "";
}

declare global {
  // Read by get-nonce, through which react-remove-scroll (Mantine's modals) styles the page.
  var __webpack_nonce__: string | undefined;
}

/** Gives the nonce to the libraries that add `<style>` tags outside Mantine's provider. */
export function shareStyleNonce(): void {
  globalThis.__webpack_nonce__ = styleNonce();
}
