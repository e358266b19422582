const DURATION = /^(\d+(?:\.\d+)?)(ms|s|m|h|d)$/;
const MILLIS_PER_UNIT = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

/** `500ms`, `5s`, `30m`, `2h`, `1d` to milliseconds; null when malformed. */
export function parseDuration(text: string): number | null {
  const match = DURATION.exec(text.trim());
  if (!match) return null;
  const millis = Number(match[1]) * MILLIS_PER_UNIT[match[2] as keyof typeof MILLIS_PER_UNIT];
  return Number.isFinite(millis) ? Math.round(millis) : null;
}

/** A comma list of durations (`1s,1s,2s`); null when any element is malformed or the list is empty. */
export function parseDurationList(text: string): number[] | null {
  const parts = text.split(',');
  const durations = parts.map(parseDuration);
  return parts.length > 0 && durations.every((value) => value !== null) ? durations : null;
}
