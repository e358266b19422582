import { beforeAll, describe, expect, it } from '@jest/globals';
import { DASHBOARD_DIST, ensureDashboardBuilt } from '../../../scripts/dashboard-build.js';
import { firstLoadJavaScript } from './first-load.js';

/** dashboard.md, Speed: the signed-in shell's first load is at most 200 KB of JavaScript, gzipped. */
const BUDGET_BYTES = 200 * 1024;

describe('the dashboard build', () => {
  beforeAll(async () => {
    await ensureDashboardBuilt();
  }, 120_000);

  it('loads the signed-in shell with at most 200 KB of gzipped JavaScript, each page in its own chunk', async () => {
    const { files, gzipBytes } = await firstLoadJavaScript(DASHBOARD_DIST);
    expect(gzipBytes).toBeLessThanOrEqual(BUDGET_BYTES);
    // Pages outside the first one are loaded when opened.
    expect(files.some((file) => /Tokens|Webhooks|EndpointPage|Team/.test(file))).toBe(false);
    process.stdout.write(
      `dashboard first load: ${(gzipBytes / 1024).toFixed(1)} KB gzipped in ${files.length} files\n`,
    );
  });
});
