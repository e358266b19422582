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
    return currentZoneName(new Intl.DateTimeFormat('en-US', { timeZone: name }).resolvedOptions().timeZone);
  } catch {
    return null;
  }
}

/**
 * The names ICU still gives for zones that IANA has renamed: Chromium says a browser in India is
 * in "Asia/Calcutta", and the dashboard wrote "Days in Asia/Calcutta time." and `tz=Asia/Calcutta`
 * to a Kolkata user. The most used of them; the old names stay accepted as input.
 */
const RENAMED_ZONES: Readonly<Record<string, string>> = {
  'Asia/Calcutta': 'Asia/Kolkata',
  'Asia/Saigon': 'Asia/Ho_Chi_Minh',
  'Asia/Katmandu': 'Asia/Kathmandu',
  'Asia/Rangoon': 'Asia/Yangon',
  'Europe/Kiev': 'Europe/Kyiv',
  'America/Godthab': 'America/Nuuk',
  'Atlantic/Faeroe': 'Atlantic/Faroe',
  'America/Buenos_Aires': 'America/Argentina/Buenos_Aires',
};

/**
 * A zone as IANA names it today (`Asia/Calcutta` -> `Asia/Kolkata`), when this runtime takes the
 * current name; else as given. For the zone a runtime reports (the viewer's) and a checked one.
 */
export function currentZoneName(zone: string): string {
  const current = RENAMED_ZONES[zone];
  if (!current) return zone;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: current });
    return current;
  } catch {
    return zone;
  }
}
