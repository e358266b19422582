import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startSmtpStandIn, type SmtpStandIn } from '@retention/testkit/smtp';
import { createLogger, createMailer } from '../src/index.js';

/**
 * The mailer against a real SMTP conversation (smtp-server, in-process): what it logs, and that
 * close() closes it, even when it comes while nodemailer, loaded at the first message, is still
 * loading.
 */
let smtp: SmtpStandIn;

beforeAll(async () => {
  smtp = await startSmtpStandIn();
});

afterAll(() => smtp.close());

function mailerWithLog() {
  const lines: Array<Record<string, unknown>> = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      for (const line of chunk.toString('utf8').split('\n').filter(Boolean)) lines.push(JSON.parse(line));
      callback();
    },
  });
  const mailer = createMailer(
    { smtpUrl: smtp.url, mailFrom: 'Retention <noreply@retention.test>' },
    createLogger('test', 'info', sink),
  )!;
  return { mailer, lines };
}

const message = (to: string) => ({ to, subject: 'Your link', text: 'A one-time link: https://retention.test/x' });
const sentTo = (to: string) => smtp.received.filter((mail) => mail.to.includes(to));

describe('the mailer', () => {
  it('sends over SMTP and logs "email sent", with the count of recipients and the subject only', async () => {
    const { mailer, lines } = mailerWithLog();
    try {
      await expect(mailer.send(message('ann@example.com'))).resolves.toBe(true);
    } finally {
      mailer.close();
    }
    expect(sentTo('ann@example.com')).toHaveLength(1);
    expect(lines.map(({ level, msg, recipients, subject }) => ({ level, msg, recipients, subject }))).toEqual([
      { level: 'info', msg: 'email sent', recipients: 1, subject: 'Your link' },
    ]);
    // Neither the address nor the message (which may hold a one-time link).
    expect(JSON.stringify(lines)).not.toMatch(/ann@example\.com|one-time link/);
  });

  it('closed while nodemailer is still loading for the first message: sends nothing then or after, and says so', async () => {
    const { mailer, lines } = mailerWithLog();
    // The first message starts the load; close() comes before it has finished (in the same turn).
    const first = mailer.send(message('first@example.com'));
    mailer.close();
    await expect(first).resolves.toBe(false);
    await expect(mailer.send(message('later@example.com'))).resolves.toBe(false);
    // Any conversation started would have been received by now: give the server a moment anyway.
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect([...sentTo('first@example.com'), ...sentTo('later@example.com')]).toEqual([]);
    expect(lines.map(({ level, msg, reason }) => ({ level, msg, reason }))).toEqual([
      { level: 'warn', msg: 'email not sent', reason: 'mailer closed' },
      { level: 'warn', msg: 'email not sent', reason: 'mailer closed' },
    ]);
  });

  it('closed after a message: the next one is not sent', async () => {
    const { mailer } = mailerWithLog();
    await expect(mailer.send(message('before@example.com'))).resolves.toBe(true);
    mailer.close();
    await expect(mailer.send(message('after@example.com'))).resolves.toBe(false);
    expect(sentTo('before@example.com')).toHaveLength(1);
    expect(sentTo('after@example.com')).toEqual([]);
  });
});
