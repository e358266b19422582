import { describe, expect, it } from '@jest/globals';
import ajv2020Module from 'ajv/dist/2020.js';
import ajvFormatsModule from 'ajv-formats';
import { EVENT_TYPES, loadConfig } from '@retention/core';
import { listDeliveryLog, recordEvent, updateWorkspace } from '@retention/domain';
import { eventually, testSecretsKey } from '@retention/testkit';
import { buildOpenApiDocument } from '../../api/src/openapi/document.js';
import { API_ENDPOINTS } from '../../api/src/routes/index.js';
import { eventsOfEveryType, numberedEvent, TEST_ENV, useWorld } from './support/world.js';

const world = useWorld();
const ok = { kind: 'status', status: 204 } as const;

describe('delivery of outbox events', () => {
  it('delivers every event type, signed over the exact bytes, with exactly the spec headers and keys', async () => {
    const { receiver, workspace } = world.current;
    const endpoint = await world.current.createEndpoint('/all-types', { behaviour: ok });
    const worker = await world.current.startWorker();
    const samples = eventsOfEveryType(workspace);
    const recorded = await world.current.record(samples);

    const requests = await receiver.waitForRequests(endpoint.path, samples.length);
    expect(receiver.problems()).toEqual([]);
    expect(requests).toHaveLength(samples.length);
    expect(new Set(requests.map((request) => request.body.type))).toEqual(new Set(EVENT_TYPES));
    for (const event of recorded) {
      const request = requests.find((candidate) => JSON.stringify(candidate.body.data) === JSON.stringify(event.data));
      expect(request?.body).toEqual({ type: event.type, created_at: event.created_at, data: event.data });
    }
    // The signature's t is the time of the attempt.
    for (const request of requests) {
      expect(Math.abs(request.signatureTimestamp! - Math.floor(request.receivedAt / 1000))).toBeLessThanOrEqual(1);
    }

    const log = await eventually(async () => {
      const entries = await listDeliveryLog(world.current.db, endpoint.id);
      return entries.length === samples.length ? entries : null;
    });
    for (const entry of log) {
      expect(entry).toEqual({
        id: expect.any(String),
        object: 'webhook_attempt',
        delivery_id: expect.any(String),
        event_id: expect.any(String),
        event_type: expect.any(String),
        attempt: 1,
        outcome: 'succeeded',
        http_status: 204,
        error: null,
        response_body: '',
        duration_ms: expect.any(Number),
        attempted_at: expect.stringMatching(/Z$/),
        next_attempt_at: null,
        url: endpoint.url,
      });
    }
    const endpointRow = await world.current.db('webhook_endpoints').where({ id: endpoint.id }).first();
    expect(endpointRow).toMatchObject({ failure_count: 0, enabled: true });
    expect(endpointRow.last_success_at).toBeInstanceOf(Date);
    // Secrets never reach a log line.
    expect(worker.rawLogs()).not.toContain(endpoint.secret);
    expect(worker.logs().filter((line) => line.msg === 'delivery attempt succeeded')).toHaveLength(samples.length);
  });

  it('sends requests the API reference describes: each body and header valid against the webhooks of /openapi.json', async () => {
    const { receiver, workspace } = world.current;
    const endpoint = await world.current.createEndpoint('/reference', { behaviour: ok });
    await world.current.startWorker();
    const samples = eventsOfEveryType(workspace);
    await world.current.record(samples);
    const requests = await receiver.waitForRequests(endpoint.path, samples.length);

    // The document the API serves, for the configuration this worker runs with.
    const config = loadConfig({ SECRETS_KEY: testSecretsKey(), ...TEST_ENV });
    const document = buildOpenApiDocument(API_ENDPOINTS, {
      prefix: '/api/v1',
      serverUrl: config.baseUrl,
      webhookTimeoutMs: config.webhookTimeoutMs,
      webhookRetryDelaysMs: config.webhookRetryDelaysMs,
    });
    const ajv = new ajv2020Module.default({ strict: true, strictTypes: false, allErrors: true });
    ajvFormatsModule.default(ajv);
    const problems: string[] = [];
    for (const request of requests) {
      const type = String(request.body.type);
      const post = document.webhooks[type]?.post;
      if (!post) {
        problems.push(`${type}: not in the document`);
        continue;
      }
      const validate = ajv.compile(post.requestBody.content['application/json'].schema);
      if (!validate(JSON.parse(request.rawBody.toString('utf8')))) {
        problems.push(`${type} body: ${ajv.errorsText(validate.errors)}`);
      }
      for (const header of post.parameters) {
        const value = request.headers[header.name.toLowerCase()];
        if (!ajv.validate(header.schema, value)) problems.push(`${type} ${header.name}: ${String(value)}`);
      }
    }
    expect(problems).toEqual([]);
    // recovery.lost three ways (neither, reason, source): every variant was checked.
    expect(requests.filter((request) => request.body.type === 'recovery.lost')).toHaveLength(3);
    expect(new Set(requests.map((request) => request.body.type))).toEqual(new Set(EVENT_TYPES));
  });

  it('sends an endpoint only the event types it subscribed to', async () => {
    const { receiver, workspace } = world.current;
    const subscribed = await world.current.createEndpoint(
      '/subscribed',
      { behaviour: ok },
      { events: ['cancel.saved', 'winback.recorded'] },
    );
    await world.current.startWorker();
    await world.current.record(eventsOfEveryType(workspace));
    const requests = await receiver.waitForRequests(subscribed.path, 2);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(
      receiver
        .requestsTo(subscribed.path)
        .map((request) => request.body.type)
        .sort(),
    ).toEqual(['cancel.saved', 'winback.recorded']);
    expect(requests.every((request) => request.problems.length === 0)).toBe(true);
  });

  it('records events of a disconnected workspace but never dispatches them, even once it reconnects', async () => {
    const { receiver, disconnected, db } = world.current;
    const endpoint = await world.current.createEndpoint(
      '/disconnected',
      { behaviour: ok },
      { workspace: disconnected },
    );
    await world.current.startWorker();
    const [event] = await world.current.record([numberedEvent(disconnected)], disconnected.id);
    // Dispatched: out of the outbox, with no delivery.
    await eventually(async () => (await db('event_outbox').where({ event_id: event!.id })).length === 0);
    expect(await db('events').where({ id: event!.id })).toHaveLength(1);
    expect(await db('webhook_deliveries').where({ event_id: event!.id })).toEqual([]);
    // Why is on record, for the dashboard's campaign timeline.
    expect(await db('events_not_sent').where({ event_id: event!.id })).toEqual([
      { event_id: event!.id, reason: 'processor_not_connected' },
    ]);

    await updateWorkspace(db, disconnected.id, { processor: 'connected' });
    const [later] = await world.current.record([numberedEvent(disconnected)], disconnected.id);
    const [request] = await receiver.waitForRequests(endpoint.path, 1);
    expect(request!.body.data).toEqual(later!.data);
    expect(await db('events_not_sent').where({ event_id: later!.id })).toEqual([]);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(receiver.requestsTo(endpoint.path)).toHaveLength(1);
    await updateWorkspace(db, disconnected.id, { processor: 'disconnected' });
  });

  it('says, when a request ends after its endpoint was deleted, that it was not recorded and why', async () => {
    const { db, receiver, workspace } = world.current;
    const endpoint = await world.current.createEndpoint('/deleted-meanwhile', {
      behaviour: { kind: 'status', status: 200, delayMs: 800 },
    });
    const worker = await world.current.startWorker();
    await world.current.record([numberedEvent(workspace)]);
    await receiver.waitForRequests(endpoint.path, 1, 10_000);
    // Deleted as the dashboard deletes one, with the request in flight: its deliveries go with it.
    await db('webhook_endpoints').where({ id: endpoint.id }).delete();
    await eventually(() =>
      worker
        .logs()
        .some(
          (line) =>
            line.endpoint_id === endpoint.id &&
            line.msg ===
              'delivery attempt finished after its lease was taken over or its endpoint was deleted; not recorded',
        ),
    );
    expect(await db('webhook_attempts').where({ endpoint_id: endpoint.id })).toEqual([]);
  });

  it('drops from the outbox an event deleted before its dispatch, and sends the events behind it', async () => {
    const { receiver, workspace, db } = world.current;
    const endpoint = await world.current.createEndpoint('/after-deleted', { behaviour: ok });
    // Recorded, then gone before any worker ran (its workspace deleted, say): the outbox keeps
    // its row, which has no event to join.
    const [gone, kept] = await world.current.record([numberedEvent(workspace), numberedEvent(workspace)]);
    await db('events').where({ id: gone!.id }).delete();
    expect(await db('event_outbox').where({ event_id: gone!.id })).toHaveLength(1);

    await world.current.startWorker();
    const [request] = await receiver.waitForRequests(endpoint.path, 1);
    expect(request!.body.data).toEqual(kept!.data);
    await eventually(async () => (await db('event_outbox').whereIn('event_id', [gone!.id, kept!.id])).length === 0);
    expect(await db('webhook_deliveries').where({ event_id: gone!.id })).toEqual([]);
  });

  it('does not send an endpoint events recorded before it was created', async () => {
    const { receiver, workspace, db } = world.current;
    const [earlier] = await world.current.record([numberedEvent(workspace)]);
    const endpoint = await world.current.createEndpoint('/created-later', { behaviour: ok });
    await world.current.startWorker();
    const [later] = await world.current.record([numberedEvent(workspace)]);
    const [request] = await receiver.waitForRequests(endpoint.path, 1);
    expect(request!.body.data).toEqual(later!.data);
    await eventually(async () => (await db('event_outbox').where({ event_id: earlier!.id })).length === 0);
    expect(receiver.requestsTo(endpoint.path)).toHaveLength(1);
  });

  it('sends an endpoint an event recorded after it was created that happened before (a processor event arriving late), dated when it happened', async () => {
    const { receiver, workspace, db } = world.current;
    const endpoint = await world.current.createEndpoint('/late-news', { behaviour: ok });
    const happenedAt = new Date(Date.now() - 2 * 86_400_000);
    const event = numberedEvent(workspace);
    const late = await db.transaction((trx) => recordEvent(trx, workspace.id, event.type, event.data, happenedAt));
    await world.current.startWorker();
    const [request] = await receiver.waitForRequests(endpoint.path, 1);
    expect(request!.body).toMatchObject({ type: late.type, created_at: happenedAt.toISOString(), data: late.data });
  });
});
