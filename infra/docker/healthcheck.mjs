// The containers' healthcheck: `node healthcheck.mjs URL` exits 0 when URL answers 2xx
// within 3 seconds, 1 otherwise. The slim Node image has no curl or wget; it has fetch.
const url = process.argv[2];
if (!url) {
  process.stderr.write('usage: node healthcheck.mjs URL\n');
  process.exit(2);
}
try {
  const response = await fetch(url, { signal: AbortSignal.timeout(3_000) });
  process.exit(response.ok ? 0 : 1);
} catch (error) {
  process.stderr.write(`${url}: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
}
