/**
 * The baseline of `npm run bench:api`: a bare node:http server that runs the same queries on
 * the same kind of pool as the API, with no Express, no authentication and no rate limit.
 * The ratio API / baseline is what the framework, auth and limiter cost.
 */
import { createServer } from 'node:http';
import {
  createDb,
  findCampaignDetail,
  JsonText,
  listCampaigns,
  listCancelSessions,
  listCustomers,
  computeStats,
} from '@retention/db';

const db = createDb(process.env.DATABASE_URL!, { applicationName: 'bench-baseline' });
const workspaceId = process.env.BENCH_WORKSPACE_ID!;

const server = createServer((req, res) => {
  const url = new URL(req.url ?? '/', 'http://localhost');
  const cursor = url.searchParams.get('cursor');
  const route = url.pathname;
  const work =
    route === '/api/v1/campaigns'
      ? listCampaigns(db, workspaceId, cursor ? { cursor: new Date(cursor) } : {})
      : route === '/api/v1/customers'
        ? listCustomers(db, workspaceId, {})
        : route === '/api/v1/cancel_sessions'
          ? listCancelSessions(db, workspaceId, {})
          : route === '/api/v1/stats'
            ? computeStats(db, workspaceId)
            : findCampaignDetail(db, workspaceId, route.split('/').at(-1)!);
  work.then(
    (body) => {
      res.writeHead(200, { 'content-type': 'application/json; charset=utf-8' });
      res.end(body instanceof JsonText ? body.text : JSON.stringify(body));
    },
    (error: unknown) => {
      res.writeHead(500);
      res.end(String(error));
    },
  );
});

server.listen(Number(process.env.PORT), () => process.stdout.write('baseline listening\n'));
process.once('SIGTERM', () => server.close(() => void db.destroy().then(() => process.exit(0))));
