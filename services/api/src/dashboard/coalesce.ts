/**
 * Joins concurrent identical reads (the overview of one workspace and period, asked by several
 * of its people's sessions at once). A call that finds the same read running does not start
 * another beside it, nor take the running one's answer (which began before the call and may
 * miss a change committed since): it waits for the next run, which starts as soon as the
 * running one ends and is shared by every call that arrived meanwhile. So each answer comes
 * from a read begun after its call arrived, as fresh as a read of its own, while N callers at
 * once cost two reads, not N. Per process; nothing is kept once no read of a key is running.
 */
export class ReadCoalescer<T> {
  private readonly reads = new Map<string, { running: Promise<T>; next: Promise<T> | null }>();

  run(key: string, read: () => Promise<T>): Promise<T> {
    const current = this.reads.get(key);
    if (!current) return this.start(key, read);
    current.next ??= current.running.then(ignore, ignore).then(() => this.start(key, read));
    return current.next;
  }

  /** How many keys have a read running (for tests). */
  get size(): number {
    return this.reads.size;
  }

  private start(key: string, read: () => Promise<T>): Promise<T> {
    const running = Promise.resolve().then(read);
    const entry = { running, next: null as Promise<T> | null };
    this.reads.set(key, entry);
    // Registered before any caller's `next`, so it runs first when the read ends: the entry
    // stays while a next run is queued (that run replaces it), and goes when none is.
    const finished = () => {
      if (this.reads.get(key) === entry && entry.next === null) this.reads.delete(key);
    };
    running.then(finished, finished);
    return running;
  }
}

const ignore = () => undefined;
