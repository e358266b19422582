/**
 * Time zone names from a client (the dashboard's address, an export's `tz`), shared by the
 * server and the page (its own import: no server code in the browser's bundle).
 */

/**
 * An IANA time zone name as this runtime spells it (`pacific/auckland` -> `Pacific/Auckland`),
 * or null for one it does not know or for an offset (`+13:00`): a zone from a client is checked
 * here before any use, and an unknown one never throws.
 */
export function knownZone(name: string): string | null {
  if (!/^[A-Za-z][A-Za-z0-9_+\-]*(\/[A-Za-z0-9_+\-]+)*$/.test(name)) return null;
  try {
    return new Intl.DateTimeFormat('en-US', { timeZone: name }).resolvedOptions().timeZone;
  } catch {
    return null;
  }
}
