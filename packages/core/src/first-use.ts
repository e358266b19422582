/**
 * A value made at its first use, then shared: the libraries a process loads only when it needs
 * them (`stripe`, `got`, `nodemailer`: docs/performance.md, "Test run"). Callers that ask while it
 * is being made wait for the same attempt. A failure is not kept: every caller of that attempt
 * sees it, and the next use tries again, so one failed load (a file descriptor short for a
 * moment) does not leave the process unable to send mail or reach Stripe until it restarts.
 */
export function firstUse<T>(make: () => Promise<T>): () => Promise<T> {
  let made: Promise<T> | undefined;
  return () =>
    (made ??= make().catch((error: unknown) => {
      made = undefined;
      throw error;
    }));
}
