/**
 * Exports every recovery campaign to CSV on stdout, walking the list with the SDK's
 * iterator and staying under the token's rate limit.
 *
 *     RETENTION_API_TOKEN=sk_live_... npx tsx examples/export-campaigns-csv.ts > campaigns.csv
 *
 * Environment: RETENTION_API_TOKEN (required), RETENTION_API_URL (default
 * http://localhost:3000, what `npm start` serves), CAMPAIGN_STATUS (optional filter:
 * in_flight, recovered, lost or abandoned).
 *
 * Pacing: when a response says the window is spent (X-RateLimit-Remaining: 0), the export
 * waits X-RateLimit-Reset seconds before the next page instead of collecting a 429. Should
 * another script share the token and a 429 come anyway, the client waits out Retry-After.
 */
import { once } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  CAMPAIGN_FIELDS,
  CAMPAIGN_STATUSES,
  Client,
  RetentionError,
  type CampaignStatus,
  type RateLimitInfo,
  type RecoveryCampaign,
} from '@retention/sdk';

function fail(message: string): never {
  process.stderr.write(`export-campaigns-csv: ${message}\n`);
  process.exit(1);
}

const token = process.env.RETENTION_API_TOKEN || fail('set RETENTION_API_TOKEN to an API token (sk_live_...)');
const baseUrl = process.env.RETENTION_API_URL || 'http://localhost:3000';
const status = process.env.CAMPAIGN_STATUS || undefined;
if (status !== undefined && !(CAMPAIGN_STATUSES as readonly string[]).includes(status)) {
  fail(`CAMPAIGN_STATUS must be one of ${CAMPAIGN_STATUSES.join(', ')}`);
}

/**
 * One CSV field (RFC 4180). Text starting with = + - @ is prefixed with ' so that a
 * spreadsheet shows it instead of running it as a formula (the processor's codes and ids
 * are not ours to trust).
 */
function csvField(value: RecoveryCampaign[keyof RecoveryCampaign]): string {
  if (value === null) return '';
  if (typeof value === 'number') return String(value);
  const text = /^[=+\-@\t\r]/.test(value) ? `'${value}` : value;
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

async function write(line: string): Promise<void> {
  if (!process.stdout.write(line)) await once(process.stdout, 'drain');
}

async function main(): Promise<void> {
  const client = new Client({ token, baseUrl });
  let exported = 0;
  let pacedFor: RateLimitInfo | null = null;

  await write(`${CAMPAIGN_FIELDS.join(',')}\r\n`);
  for await (const campaign of client.campaigns.all(status ? { status: status as CampaignStatus } : {})) {
    await write(`${CAMPAIGN_FIELDS.map((field) => csvField(campaign[field])).join(',')}\r\n`);
    exported += 1;
    // A new response that spent the window: wait for it to slide before the next page.
    const limit = client.rateLimit;
    if (limit && limit !== pacedFor && limit.remaining === 0) {
      pacedFor = limit;
      process.stderr.write(`rate limit reached: pausing ${limit.resetSeconds} s\n`);
      await sleep(limit.resetSeconds * 1000);
    }
  }
  process.stderr.write(`exported ${exported} campaign${exported === 1 ? '' : 's'}\n`);
}

main().catch((error: unknown) => {
  if (error instanceof RetentionError) {
    // No answer at all: say where to look (the SDK's message names the URL and the cause).
    const check =
      error.type === 'connection_error'
        ? ` Is the service running? If so, check RETENTION_API_URL (${baseUrl}): npm start prints the API's URL.`
        : '';
    fail(`${error.type}: ${error.message}${error.requestId ? ` (request ${error.requestId})` : ''}${check}`);
  }
  throw error;
});
