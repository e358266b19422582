import { chmod, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { chromium } from 'playwright-core';
import { chromiumLaunchOptions, FULL_BROWSER } from './support/chromium.js';

/**
 * The switches the browser tests start Chromium with (support/chromium.ts). Chromium keeps only
 * the last `--disable-features`, so ours must be the only one: Playwright's own is dropped by
 * its exact text and restated in ours.
 */
describe('the browser tests’ Chromium switches', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'chromium-switches-'));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('carry one --disable-features, which keeps every feature Playwright turns off', async () => {
    // A stand-in browser that writes down the arguments it was started with and exits.
    const recorded = path.join(dir, 'arguments');
    const standIn = path.join(dir, 'chromium');
    await writeFile(standIn, `#!/bin/sh\nprintf '%s\\n' "$@" > '${recorded}'\nexit 1\n`);
    await chmod(standIn, 0o755);
    await expect(chromium.launch({ ...chromiumLaunchOptions(standIn), timeout: 10_000 })).rejects.toThrow();
    // Without our list, what Playwright passes by itself: the features it turns off.
    const standInDefault = path.join(dir, 'arguments-default');
    await writeFile(standIn, `#!/bin/sh\nprintf '%s\\n' "$@" > '${standInDefault}'\nexit 1\n`);
    await expect(chromium.launch({ executablePath: standIn, timeout: 10_000 })).rejects.toThrow();

    const featureSwitches = (text: string) =>
      text.split('\n').filter((argument) => argument.startsWith('--disable-features='));
    const ours = featureSwitches(await readFile(recorded, 'utf8'));
    const playwrights = featureSwitches(await readFile(standInDefault, 'utf8'));
    expect(playwrights).toHaveLength(1);
    expect(ours).toHaveLength(1);
    const features = (argument: string) => argument.slice('--disable-features='.length).split(',');
    expect(features(ours[0]!)).toEqual(expect.arrayContaining(features(playwrights[0]!)));
    expect(features(ours[0]!)).toEqual(expect.arrayContaining(['WebUIOmniboxPopup', 'WebUIOmniboxAimPopup']));
  });

  // The full browser's address bar (the headless shell, which the tests prefer, has none).
  it('leave no address-bar popup preloaded beside a page in the full browser', async () => {
    const browser = await chromium.launch(chromiumLaunchOptions(FULL_BROWSER));
    try {
      const context = await browser.newContext();
      const page = await context.newPage();
      await page.goto('data:text/html,<title>t</title><p>hello</p>');
      const session = await browser.newBrowserCDPSession();
      const { targetInfos } = await session.send('Target.getTargets');
      expect(targetInfos.map((target) => `${target.type} ${target.url}`)).toEqual([
        'page data:text/html,<title>t</title><p>hello</p>',
      ]);
    } finally {
      await browser.close();
    }
  });
});
