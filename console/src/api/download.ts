/** The filename a Content-Disposition header names, if it names one. */
export function attachmentName(disposition: string | null): string | undefined {
  return disposition?.match(/filename="([^"]+)"/)?.[1];
}

/**
 * Hands a downloaded body to the browser as a file: a temporary object URL that a hidden
 * link opens. (A plain link cannot carry the session's Authorization header, so the body
 * is fetched through the API client first.)
 */
export function saveFile(blob: Blob, name: string): void {
  const url = URL.createObjectURL(blob);
  const link = document.createElement("a");
  link.href = url;
  link.download = name;
  link.hidden = true;
  document.body.append(link);
  link.click();
  link.remove();
  // The download has its own reference once started; the URL only has to outlive the click.
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
}
