import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { AxeBuilder } from '@axe-core/playwright';
import type { Page } from 'playwright-core';

/**
 * Where the browser tests' screenshots go: SCREENSHOT_DIR when it is set, else none are taken.
 * Nothing asserts on them (they are for a person to look at), and a full-page PNG costs the
 * browser and the test CPU that a test run on two cores spends waiting (docs/performance.md).
 */
export const SCREENSHOT_DIR = process.env.SCREENSHOT_DIR || null;

/** A full-page screenshot as `<name>.png` in SCREENSHOT_DIR, when it is set; else nothing. */
export async function screenshot(target: Page, name: string): Promise<void> {
  if (!SCREENSHOT_DIR) return;
  await mkdir(SCREENSHOT_DIR, { recursive: true });
  await target.screenshot({ path: path.join(SCREENSHOT_DIR, `${name}.png`), fullPage: true });
}

/**
 * The checks every dashboard page must pass (docs/dashboard-ui.md): no serious or critical
 * axe-core violation, and nothing wider than a 390 px phone but the tables' own scrolling.
 * Screenshots at 1280 and 390 px as `<name>-<width>.png` when SCREENSHOT_DIR is set. Returns the
 * problems found, one line each, so a test can report all pages at once.
 */
export async function checkPage(target: Page, name: string): Promise<string[]> {
  const violations = await seriousViolations(target, name);
  await screenshot(target, `${name}-1280`);
  await target.setViewportSize({ width: 390, height: 844 });
  const overflow = await target.evaluate<number>('document.documentElement.scrollWidth - window.innerWidth');
  await screenshot(target, `${name}-390`);
  await target.setViewportSize({ width: 1280, height: 900 });
  return [...violations, ...(overflow > 0 ? [`${name}: ${overflow}px wider than a 390 px screen`] : [])];
}

/**
 * The page's serious and critical axe-core violations, one line each (none: an empty list).
 *
 * Run as axe.run in the page itself (legacy mode) and collecting details of violations only:
 * the default opens a blank page for every scan to merge per-frame results, and details every
 * passing node, which made a scan of a long list take seconds. The dashboard has no frames,
 * the only thing legacy mode leaves out, and every rule still runs: on each insight page both
 * ways reported the same violations, with and without some planted in the page.
 */
export async function seriousViolations(target: Page, name: string): Promise<string[]> {
  const results = await new AxeBuilder({ page: target })
    .options({ resultTypes: ['violations'] })
    .setLegacyMode(true)
    .analyze();
  return results.violations
    .filter((violation) => violation.impact === 'serious' || violation.impact === 'critical')
    .map(
      (violation) =>
        `${name}: ${violation.id} (${violation.impact}) ${violation.nodes.map((node) => node.target.join(' ')).join(', ')}`,
    );
}
