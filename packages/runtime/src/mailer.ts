import nodemailer from 'nodemailer';
import { ConfigError } from '@retention/core';
import type { Logger } from './logger.js';

/**
 * E-mail over SMTP (nodemailer) when SMTP_URL is set: invitations, password resets and the
 * auto-disable alert. Sending never throws and never blocks the change that asked for it: a
 * failure is logged with the SMTP error code only (never the URL, which holds a password, nor
 * the message, which may hold a one-time link) and answered `false`.
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
  const transport = nodemailer.createTransport(
    {
      host: url.hostname.replace(/^\[|\]$/g, ''),
      port: url.port ? Number(url.port) : url.protocol === 'smtps:' ? 465 : 587,
      secure: url.protocol === 'smtps:',
      ...(url.username && { auth: { user: credential(url.username), pass: credential(url.password) } }),
      connectionTimeout: 10_000,
      greetingTimeout: 10_000,
      socketTimeout: 20_000,
      ...(options.rejectUnauthorized === false && { tls: { rejectUnauthorized: false } }),
    },
    { from: settings.mailFrom },
  );
  return {
    async send(message) {
      const recipients = Array.isArray(message.to) ? message.to : [message.to];
      try {
        await transport.sendMail({ to: recipients, subject: message.subject, text: message.text });
        logger.info({ recipients: recipients.length, subject: message.subject }, 'e-mail sent');
        return true;
      } catch (error) {
        const code = (error as { code?: unknown; responseCode?: unknown }) ?? {};
        logger.warn(
          { recipients: recipients.length, subject: message.subject, code: code.code, smtp_status: code.responseCode },
          'e-mail not sent',
        );
        return false;
      }
    },
    close: () => transport.close(),
  };
}

/**
 * The user name or password of SMTP_URL, percent-decoded. A password pasted as it is, with a
 * `%` not followed by two hex digits, cannot be decoded: that is the variable's fault, so the
 * process stops at start naming it (the message never holds the value).
 */
function credential(encoded: string): string {
  try {
    return decodeURIComponent(encoded);
  } catch {
    throw new ConfigError(
      'SMTP_URL',
      'its user name or password is not percent-encoded: write % as %25, @ as %40, : as %3A and / as %2F',
    );
  }
}
