import type { Db } from '@retention/db';
import { claimKeyRejectionMails, processorKeyRejectedMessage, workspaceOwnerRecipients } from '@retention/domain';
import type { Logger, Mailer } from '@retention/runtime';

/**
 * Emails a workspace's owners when Stripe refuses its stored key (docs/processor.md, "When
 * Stripe refuses the key"): the banner of every page tells only those who open the dashboard.
 * The refusal owes the email in the transaction that disconnects the connection (an event's
 * apply or an import, `rejectProcessorKey`); this loop takes what is owed after it commits and
 * sends it, so an apply rolled back sends nothing, a worker that dies between the commit and
 * the email leaves it to the next look (its own or another replica's), and any number of
 * replicas send it once. A look every `pollMs`: an email a second late costs nothing, and the
 * look reads a partial index of the connections owed one, empty nearly always.
 */
export class KeyRejectionMail {
  private timer: NodeJS.Timeout | undefined;
  private looking: Promise<void> | null = null;

  constructor(private readonly deps: { db: Db; mailer: Mailer; logger: Logger; baseUrl: string; pollMs: number }) {}

  start(): void {
    this.look();
    this.timer = setInterval(() => this.look(), this.deps.pollMs);
  }

  /** Stops looking; the emails being sent finish first. */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.looking;
  }

  private look(): void {
    this.looking ??= this.sendOwed()
      .catch((error: unknown) => this.deps.logger.warn({ err: error }, 'key-refusal emails not looked for'))
      .finally(() => {
        this.looking = null;
      });
  }

  private async sendOwed(): Promise<void> {
    const { db, mailer, logger, baseUrl } = this.deps;
    for (const { workspace_id } of await claimKeyRejectionMails(db)) {
      const target = await workspaceOwnerRecipients(db, workspace_id);
      if (!target || target.emails.length === 0) {
        logger.warn({ workspace_id }, 'Stripe refused the key of a workspace with no owner to email');
        continue;
      }
      const message = processorKeyRejectedMessage({
        workspace_name: target.workspace_name,
        link: `${baseUrl}/dashboard/settings/processor`,
      });
      // The mailer logs a failure itself (the SMTP code, never the message) and never throws.
      await mailer.send({ to: target.emails, ...message });
    }
  }
}
