import type { Transporter } from 'nodemailer';
import { firstUse, urlCredentials } from '@retention/core';
import type { Logger } from './logger.js';

/**
 * Email over SMTP (nodemailer) when SMTP_URL is set: invitations, password resets and the
 * auto-disable alert. Sending never throws and never blocks the change that asked for it: a
 * failure is logged with the SMTP error code only (never the URL, which holds a password, nor
 * the message, which may hold a one-time link) and answered `false`. Once `close()` is called no
 * SMTP conversation starts (one already under way finishes): a message is answered `false` and
 * logged as not sent, `reason: "mailer closed"`.
 */
export interface MailMessage {
  to: string | string[];
  subject: string;
  text: string;
}

export interface Mailer {
  send(message: MailMessage): Promise<boolean>;
  close(): void;
}

export function createMailer(
  settings: { smtpUrl: string | null; mailFrom: string },
  logger: Logger,
  /** Tests of a local SMTP server with a self-signed certificate. */
  options: { rejectUnauthorized?: boolean } = {},
): Mailer | null {
  if (!settings.smtpUrl) return null;
  const url = new URL(settings.smtpUrl);
  // nodemailer is loaded at the first message, not at start: most starts (every CLI command but
  // a few, and a service that sends no mail before it stops) never send one, and it is one of
  // the larger imports of a process's start (docs/performance.md, "Test run").
  const transportOptions = {
    host: url.hostname.replace(/^\[|\]$/g, ''),
    port: url.port ? Number(url.port) : url.protocol === 'smtps:' ? 465 : 587,
    secure: url.protocol === 'smtps:',
    ...(url.username && { auth: urlCredentials('SMTP_URL', url) }),
    connectionTimeout: 10_000,
    greetingTimeout: 10_000,
    socketTimeout: 20_000,
    ...(options.rejectUnauthorized === false && { tls: { rejectUnauthorized: false } }),
  };
  let opened: Transporter | undefined;
  let closed = false;
  const transport = firstUse(async () => {
    const { default: nodemailer } = await import('nodemailer');
    opened = nodemailer.createTransport(transportOptions, { from: settings.mailFrom });
    // close() came while nodemailer was loading, before there was a transport to close: close it
    // now.
    if (closed) opened.close();
    return opened;
  });
  return {
    async send(message) {
      const recipients = Array.isArray(message.to) ? message.to : [message.to];
      const about = { recipients: recipients.length, subject: message.subject };
      const refused = () => {
        logger.warn({ ...about, reason: 'mailer closed' }, 'email not sent');
        return false;
      };
      try {
        if (closed) return refused();
        const ready = await transport();
        // Closed while nodemailer was loading for this message: no conversation starts after
        // close().
        if (closed) return refused();
        await ready.sendMail({ to: recipients, subject: message.subject, text: message.text });
        logger.info(about, 'email sent');
        return true;
      } catch (error) {
        const code = (error as { code?: unknown; responseCode?: unknown }) ?? {};
        logger.warn({ ...about, code: code.code, smtp_status: code.responseCode }, 'email not sent');
        return false;
      }
    },
    close() {
      closed = true;
      opened?.close();
    },
  };
}
