import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { SMTPServer } from 'smtp-server';
import { endpointAlerts, getEndpoint } from '@retention/domain';
import { eventually } from '@retention/testkit';
import { numberedEvent, useWorld } from './support/world.js';

/** The auto-disable alert, e-mailed by a real worker through a real SMTP conversation. */
const world = useWorld();
const received: Array<{ to: string[]; raw: string }> = [];
let smtp: SMTPServer;
let smtpPort = 0;

beforeAll(async () => {
  smtp = new SMTPServer({
    disabledCommands: ['STARTTLS'],
    authOptional: true,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        received.push({
          to: session.envelope.rcptTo.map((rcpt) => rcpt.address),
          raw: Buffer.concat(chunks).toString('utf8'),
        });
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => smtp.listen(0, '127.0.0.1', resolve));
  smtpPort = (smtp.server.address() as AddressInfo).port;
});

afterAll(async () => {
  await new Promise<void>((resolve) => smtp.close(() => resolve()));
});

describe('auto-disable alert', () => {
  it("e-mails the workspace's owners and admins once, and the endpoint carries the alert", async () => {
    const { db, workspace } = world.current;
    const endpoint = await world.current.createEndpoint('/alerting', { behaviour: { kind: 'status', status: 500 } });
    const worker = await world.current.startWorker({
      env: { WEBHOOK_RETRY_DELAYS: Array(12).fill('30ms').join(','), SMTP_URL: `smtp://127.0.0.1:${smtpPort}` },
      options: { maxInFlightPerEndpoint: 1 },
    });
    await world.current.record([numberedEvent(workspace), numberedEvent(workspace)]);
    await eventually(async () => !(await getEndpoint(db, endpoint.id)).enabled);
    await eventually(() => received.length > 0, 10_000);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(received).toHaveLength(1);
    const recipients = await db('users')
      .where({ workspace_id: workspace.id })
      .whereIn('role', ['owner', 'admin'])
      .pluck('email');
    expect(received[0]!.to.sort()).toEqual(recipients.sort());
    expect(received[0]!.raw).toMatch(/Subject: =\?UTF-8\?Q\?Webhook_endpoint_/);
    expect(received[0]!.raw).toContain('10 consecutive failed deliveries');
    expect(received[0]!.raw).not.toContain(endpoint.secret);
    expect((await endpointAlerts(db, [endpoint.id])).get(endpoint.id)).toMatchObject({
      reason: 'consecutive_failures',
    });
    expect(worker.rawLogs()).toContain('e-mail sent');
  });
});
