import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';

/** One message as the stand-in received it. */
export interface ReceivedMail {
  /** The envelope's sender ('' for a null sender). */
  from: string;
  /** The envelope's recipients, lower-cased (tests compare them with stored, lower-cased emails). */
  to: string[];
  /** The message as sent: headers and body, the body possibly quoted-printable. */
  raw: string;
  /** The message with quoted-printable undone (soft line breaks joined, =XX decoded), so a long link reads whole. */
  text: string;
}

export interface SmtpStandIn {
  /** Every message received so far, in order. */
  received: ReceivedMail[];
  port: number;
  /** An SMTP_URL for the service, with the credentials when the stand-in asks for them. */
  url: string;
  close(): Promise<void>;
}

/**
 * A real SMTP server in the test's process (smtp-server) that keeps what it is sent: the only
 * stand-in our integration tests may use for email, since no mail provider is reachable here.
 * With `credentials`, it refuses a client that does not log in with them (AUTH over plain text,
 * as the tests talk to it on 127.0.0.1); without, it offers no AUTH at all.
 */
export async function startSmtpStandIn(
  options: { credentials?: { user: string; password: string } } = {},
): Promise<SmtpStandIn> {
  const received: ReceivedMail[] = [];
  const { credentials } = options;
  const server = new SMTPServer({
    disabledCommands: credentials ? ['STARTTLS'] : ['STARTTLS', 'AUTH'],
    allowInsecureAuth: Boolean(credentials),
    onAuth(auth, _session, callback) {
      if (credentials && auth.username === credentials.user && auth.password === credentials.password) {
        callback(null, { user: credentials.user });
      } else callback(new Error('bad credentials'));
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        const raw = Buffer.concat(chunks).toString('utf8');
        received.push({
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          to: session.envelope.rcptTo.map((rcpt) => rcpt.address.toLowerCase()),
          raw,
          text: unquote(raw),
        });
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.server.address() as AddressInfo).port;
  const login = credentials ? `${credentials.user}:${credentials.password}@` : '';
  return {
    received,
    port,
    url: `smtp://${login}127.0.0.1:${port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** Quoted-printable undone: each =XX is a byte, the bytes UTF-8 (nodemailer's encoding). */
const unquote = (raw: string) =>
  Buffer.from(
    raw
      .replace(/=\r?\n/g, '')
      .replace(/=([0-9A-F]{2})/g, (_match, hex: string) => String.fromCharCode(parseInt(hex, 16))),
    'latin1',
  ).toString('utf8');
