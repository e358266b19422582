import path from 'node:path';
import { AxeBuilder } from '@axe-core/playwright';
import type { Page } from 'playwright-core';

/**
 * The checks every dashboard page must pass (docs/dashboard-ui.md): no serious or critical
 * axe-core violation, and nothing wider than a 390 px phone but the tables' own scrolling.
 * Screenshots at 1280 and 390 px go to `screenshots` as `<name>-<width>.png`. Returns the
 * problems found, one line each, so a test can report all pages at once.
 */
export async function checkPage(target: Page, name: string, screenshots: string): Promise<string[]> {
  const results = await new AxeBuilder({ page: target }).analyze();
  await target.screenshot({ path: path.join(screenshots, `${name}-1280.png`), fullPage: true });
  await target.setViewportSize({ width: 390, height: 844 });
  const overflow = await target.evaluate<number>('document.documentElement.scrollWidth - window.innerWidth');
  await target.screenshot({ path: path.join(screenshots, `${name}-390.png`), fullPage: true });
  await target.setViewportSize({ width: 1280, height: 900 });
  return [
    ...results.violations
      .filter((violation) => violation.impact === 'serious' || violation.impact === 'critical')
      .map(
        (violation) =>
          `${name}: ${violation.id} (${violation.impact}) ${violation.nodes.map((node) => node.target.join(' ')).join(', ')}`,
      ),
    ...(overflow > 0 ? [`${name}: ${overflow}px wider than a 390 px screen`] : []),
  ];
}
