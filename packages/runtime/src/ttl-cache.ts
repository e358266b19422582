/**
 * Values this process keeps for a while, bounded in number: the expiry and the bound of its
 * in-memory caches (token and session look-ups, processor connections, remembered refusals).
 * A value is not returned once its lifetime has passed (it is dropped when asked for), and a
 * full cache drops its oldest entry to make room: a Map iterates in insertion order, and
 * setting a key again makes it the newest. Times are epoch milliseconds; `now` is a parameter
 * so tests can run on a fake clock.
 */
export class TtlCache<V> {
  private readonly entries = new Map<string, { value: V; expiresAt: number }>();

  constructor(private readonly maxEntries: number) {
    if (!Number.isInteger(maxEntries) || maxEntries < 1) {
      throw new RangeError(`maxEntries must be a positive integer, not ${maxEntries}`);
    }
  }

  get(key: string, now = Date.now()): V | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    if (entry.expiresAt <= now) {
      this.entries.delete(key);
      return undefined;
    }
    return entry.value;
  }

  /** Keeps `value` under `key` for `lifetimeMs` from `now`, in place of any value it had. */
  set(key: string, value: V, lifetimeMs: number, now = Date.now()): void {
    this.entries.delete(key);
    if (this.entries.size >= this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
    this.entries.set(key, { value, expiresAt: now + lifetimeMs });
  }

  delete(key: string): void {
    this.entries.delete(key);
  }

  clear(): void {
    this.entries.clear();
  }

  /** Entries held, expired ones not yet dropped included. */
  get size(): number {
    return this.entries.size;
  }
}
