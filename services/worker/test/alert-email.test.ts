import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { endpointAlerts, getEndpoint } from '@retention/domain';
import { eventually } from '@retention/testkit';
import { startSmtpStandIn, type SmtpStandIn } from '@retention/testkit/smtp';
import { numberedEvent, useWorld } from './support/world.js';

/** The auto-disable alert, emailed by a real worker through a real SMTP conversation. */
const world = useWorld();
let smtp: SmtpStandIn;

beforeAll(async () => {
  smtp = await startSmtpStandIn();
});

afterAll(() => smtp.close());

describe('auto-disable alert', () => {
  it("emails the workspace's owners and admins once, and the endpoint carries the alert", async () => {
    const { db, workspace } = world.current;
    const endpoint = await world.current.createEndpoint('/alerting', { behaviour: { kind: 'status', status: 500 } });
    const worker = await world.current.startWorker({
      env: { WEBHOOK_RETRY_DELAYS: Array(12).fill('30ms').join(','), SMTP_URL: smtp.url },
      options: { maxInFlightPerEndpoint: 1 },
    });
    await world.current.record([numberedEvent(workspace), numberedEvent(workspace)]);
    await eventually(async () => !(await getEndpoint(db, endpoint.id)).enabled);
    await eventually(() => smtp.received.length > 0, 10_000);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(smtp.received).toHaveLength(1);
    const recipients = await db('users')
      .where({ workspace_id: workspace.id })
      .whereIn('role', ['owner', 'admin'])
      .pluck('email');
    expect(smtp.received[0]!.to.sort()).toEqual(recipients.sort());
    expect(smtp.received[0]!.raw).toMatch(/Subject: =\?UTF-8\?Q\?Webhook_endpoint_/);
    expect(smtp.received[0]!.raw).toContain('10 consecutive failed deliveries');
    expect(smtp.received[0]!.raw).not.toContain(endpoint.secret);
    expect((await endpointAlerts(db, [endpoint.id])).get(endpoint.id)).toMatchObject({
      reason: 'consecutive_failures',
    });
    expect(worker.rawLogs()).toContain('email sent');
  });
});
