/**
 * Request bodies nested deeper than this are refused before they are parsed. No field of
 * the API needs more, and code that recurses over a value (JSON.stringify of `data` or a
 * service account, when it is stored as text) overflows its stack long before the body
 * limit stops the nesting: a 500 for bad input.
 */
export const MAX_JSON_DEPTH = 64;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPENERS = new Set([0x5b, 0x7b]);
const CLOSERS = new Set([0x5d, 0x7d]);

/** Whether JSON text opens arrays and objects more than `max` levels deep (strings skipped; it need not be valid). */
export function nestedDeeperThan(text: string, max: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === BACKSLASH) i++;
      else if (c === QUOTE) inString = false;
    } else if (c === QUOTE) inString = true;
    else if (OPENERS.has(c)) {
      if (++depth > max) return true;
    } else if (CLOSERS.has(c)) depth--;
  }
  return false;
}
