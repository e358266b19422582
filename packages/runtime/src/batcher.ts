/**
 * Groups calls made in the same turn of the event loop into one call of `run`, the way a
 * database groups commits: while `maxRunning` batches are in flight, new items wait and go
 * together in the next one. Under load, many deliveries finish at once and share one
 * statement; alone, an item goes out at once, with no timer in its way.
 *
 * With `isolateFailures`, a batch that fails is run again one item at a time, so that one bad
 * item (a row the database refuses) fails alone instead of taking its neighbours with it.
 */
export class Batcher<Item, Result> {
  private queued: Array<{ item: Item; resolve: (result: Result) => void; reject: (error: unknown) => void }> = [];
  private running = 0;
  private scheduled = false;

  constructor(
    private readonly run: (items: Item[]) => Promise<Result[]>,
    private readonly options: { maxSize: number; maxRunning: number; isolateFailures?: boolean },
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
          (error: unknown) =>
            this.options.isolateFailures && batch.length > 1
              ? this.runOneByOne(batch)
              : batch.forEach((entry) => entry.reject(error)),
        )
        .finally(() => {
          this.running -= 1;
          this.drain();
        });
    }
  }

  /** In turn, within the failed batch's place among those running: the pool sees one at a time. */
  private async runOneByOne(batch: Batcher<Item, Result>['queued']): Promise<void> {
    for (const entry of batch) {
      try {
        entry.resolve((await this.run([entry.item]))[0]!);
      } catch (error) {
        entry.reject(error);
      }
    }
  }
}
