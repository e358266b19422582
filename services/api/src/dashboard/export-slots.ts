import { rateLimited } from '@retention/core';

/**
 * How many CSV exports run at once in this process (docs/dashboard-api.md, "Exports"). An
 * export holds a pooled connection only while it reads a page, but a client that reads fast
 * keeps it reading page after page, and each export holds a page in memory: without a bound, a
 * burst of exports would take the pool (10 connections) from every other request. A person
 * downloads one or two at a time; a third of a workspace is refused rather than queued, and so
 * is any beyond the process's total, which leaves most of the pool to everything else.
 */
const EXPORTS_PER_WORKSPACE = 2;
const EXPORTS_PER_PROCESS = 4;
/** What a refused export is told to wait: a download of a large list takes seconds. */
const RETRY_AFTER_MS = 5_000;

export class ExportSlots {
  private readonly running = new Map<string, number>();
  private total = 0;

  /**
   * Throws the 429 an export of the workspace would get now, taking nothing: a HEAD answers
   * what its GET would, and a GET refused here would not be worth a download manager's try.
   */
  check(workspaceId: string): void {
    if ((this.running.get(workspaceId) ?? 0) >= EXPORTS_PER_WORKSPACE) {
      throw rateLimited(
        `Too many CSV exports at once: at most ${EXPORTS_PER_WORKSPACE} at a time for a workspace. Wait for one to finish and try again.`,
        RETRY_AFTER_MS,
      );
    }
    if (this.total >= EXPORTS_PER_PROCESS) {
      throw rateLimited('Too many CSV exports are running. Wait a moment and try again.', RETRY_AFTER_MS);
    }
  }

  /** Takes a slot for an export of the workspace, or throws 429; call the returned function once it ends. */
  take(workspaceId: string): () => void {
    this.check(workspaceId);
    const ofWorkspace = this.running.get(workspaceId) ?? 0;
    this.running.set(workspaceId, ofWorkspace + 1);
    this.total += 1;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.total -= 1;
      const left = (this.running.get(workspaceId) ?? 1) - 1;
      if (left === 0) this.running.delete(workspaceId);
      else this.running.set(workspaceId, left);
    };
  }
}
