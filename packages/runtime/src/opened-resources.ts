/**
 * A process's start-up: connections and servers opened one after another. When a later step
 * fails, what was opened closes, newest first, and the failure is thrown (reworded when the
 * step says how); at shutdown the same list closes in the same order. One place for "open in
 * order, close the opened ones in reverse", which every entry point needs.
 */
export class OpenedResources {
  private readonly closers: Array<() => unknown> = [];

  /** `closeFailed`: told of each close that fails (the others go on); by default, nobody. */
  constructor(private readonly closeFailed: (error: unknown) => void = () => {}) {}

  /** Keeps `resource`, to be closed with `close` when a later step fails, or at shutdown. */
  add<T>(resource: T, close: (resource: T) => unknown): T {
    this.closers.push(() => close(resource));
    return resource;
  }

  /**
   * Runs a start-up step. When it fails, everything added so far closes, newest first, and
   * the step's error is thrown, through `reword` when given (to say which service is down).
   */
  async step<T>(run: () => Promise<T>, reword?: (error: unknown) => Error): Promise<T> {
    try {
      return await run();
    } catch (error) {
      await this.closeAll();
      throw reword ? reword(error) : error;
    }
  }

  /** Closes everything added, newest first; a close that fails does not stop the others. */
  async closeAll(): Promise<void> {
    while (this.closers.length > 0) {
      const close = this.closers.pop()!;
      try {
        await close();
      } catch (error) {
        // The others still close; the failure that brought us here (if any) is the one thrown.
        this.closeFailed(error);
      }
    }
  }
}
