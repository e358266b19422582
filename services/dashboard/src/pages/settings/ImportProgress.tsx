import { Time } from '../../components/Time.js';
import { backfillStatusText } from '../../labels.js';

/** The backfill of GET /processor (docs/processor.md, "Backfill"). */
export interface Backfill {
  status: string;
  phase: string | null;
  counts: { customers: number; subscriptions: number; invoices: number };
  error: string | null;
  started_at: string | null;
  finished_at: string | null;
  /** Waiting out Stripe's rate limit (its 429s) until then; null when not waiting. */
  waiting_until: string | null;
  /** A run that failed part-way kept its place: Import again goes on from there. */
  resumable: boolean;
}

/** While the import is queued or running, the Processor page reads its status again by itself. */
export const importInProgress = (backfill: Backfill | undefined) =>
  backfill?.status === 'queued' || backfill?.status === 'running';

/** How often the page reads the status while an import is in progress: its counts move at this pace. */
export const IMPORT_REFRESH_MS = 2_000;

/**
 * The import's status, phase and counts, and when it started and finished: the counts alone
 * did not tell a run that ended an hour ago from one that is under way.
 */
export function ImportProgress({ backfill }: { backfill: Backfill }) {
  const { counts } = backfill;
  // The phase says where a run is, or where a failed one stopped (backfillStatusText: "Importing
  // customers", "Failed while importing open invoices"); a finished run kept its last phase, and
  // "succeeded (invoices)" read as if only invoices were imported.
  return (
    <>
      <span>
        {backfillStatusText(backfill.status, backfill.phase)}: {counts.customers} customers, {counts.subscriptions}{' '}
        subscriptions, {counts.invoices} open invoices
        {backfill.error && ` — ${backfill.error}`}
      </span>
      {backfill.waiting_until && (
        // Stripe's 429s hold a run still for up to a minute at a time: said, so that counts that
        // stop moving do not read as an import that hung.
        <span className="hint block">
          Stripe asked us to wait (its rate limit) until <Time value={backfill.waiting_until} seconds />; the import
          goes on by itself then.
        </span>
      )}
      {backfill.started_at && (
        <span className="hint block">
          Started <Time value={backfill.started_at} />
          {backfill.finished_at ? (
            <>
              , finished <Time value={backfill.finished_at} />
            </>
          ) : (
            importInProgress(backfill) && ', not finished yet'
          )}
        </span>
      )}
    </>
  );
}
