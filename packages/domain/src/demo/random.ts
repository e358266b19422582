/**
 * A small seeded PRNG (mulberry32) and the draws the demo data needs. Not for secrets:
 * its only virtue is that the same seed gives the same sequence on every machine.
 */
export class SeededRandom {
  private state: number;

  constructor(seed: number) {
    this.state = seed >>> 0;
  }

  /** A float in [0, 1). */
  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  }

  /** A float in [min, max). */
  between(min: number, max: number): number {
    return min + (max - min) * this.next();
  }

  /** An integer in [min, max]. */
  integer(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  chance(probability: number): boolean {
    return this.next() < probability;
  }

  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.next() * items.length)]!;
  }

  /** One value, drawn with probability proportional to its weight. */
  weighted<T>(entries: ReadonlyArray<readonly [T, number]>): T {
    const total = entries.reduce((sum, [, weight]) => sum + weight, 0);
    let point = this.next() * total;
    for (const [value, weight] of entries) {
      point -= weight;
      if (point < 0) return value;
    }
    return entries.at(-1)![0];
  }

  private static readonly BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

  base62(length: number): string {
    let out = '';
    for (let i = 0; i < length; i += 1) out += SeededRandom.BASE62[Math.floor(this.next() * 62)];
    return out;
  }
}
