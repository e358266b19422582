/**
 * The baseline of `npm run bench:processor`: a bare node:http server that reads the body and
 * verifies its Stripe signature with the same library call, then answers 200. No Express, no
 * database: the ratio API / baseline is what storing each event once (and the framework) costs.
 */
import { createServer } from 'node:http';
import Stripe from 'stripe';

const secret = process.env.BENCH_WEBHOOK_SECRET!;

const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    try {
      Stripe.webhooks.constructEvent(Buffer.concat(chunks), req.headers['stripe-signature'] ?? '', secret, 300);
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"received":true}');
    } catch {
      res.writeHead(400);
      res.end();
    }
  });
});

server.listen(Number(process.env.PORT), () => process.stdout.write('baseline listening\n'));
process.once('SIGTERM', () => server.close(() => process.exit(0)));
