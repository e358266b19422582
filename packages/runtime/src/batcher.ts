/**
 * Groups calls made in the same turn of the event loop into one call of `run`, the way a
 * database groups commits: while `maxRunning` batches are in flight, new items wait and go
 * together in the next one. Under load, many deliveries finish at once and share one
 * statement; alone, an item goes out at once, with no timer in its way.
 */
export class Batcher<Item, Result> {
  private queued: Array<{ item: Item; resolve: (result: Result) => void; reject: (error: unknown) => void }> = [];
  private running = 0;
  private scheduled = false;

  constructor(
    private readonly run: (items: Item[]) => Promise<Result[]>,
    private readonly options: { maxSize: number; maxRunning: number },
  ) {}

  submit(item: Item): Promise<Result> {
    return new Promise((resolve, reject) => {
      this.queued.push({ item, resolve, reject });
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => {
          this.scheduled = false;
          this.drain();
        });
      }
    });
  }

  private drain(): void {
    while (this.running < this.options.maxRunning && this.queued.length > 0) {
      const batch = this.queued.splice(0, this.options.maxSize);
      this.running += 1;
      this.run(batch.map((entry) => entry.item))
        .then(
          (results) => batch.forEach((entry, index) => entry.resolve(results[index]!)),
          (error: unknown) => batch.forEach((entry) => entry.reject(error)),
        )
        .finally(() => {
          this.running -= 1;
          this.drain();
        });
    }
  }
}
