import { existsSync } from 'node:fs';
import { chromium, type Browser, type LaunchOptions } from 'playwright-core';

/**
 * Playwright's own `--disable-features` list (playwright-core 1.65, chromiumSwitches). Chromium
 * keeps only the last `--disable-features` it is given, so a list of ours replaces this one
 * whole unless it restates it; `chromium-switches.test.ts` fails when an upgrade of Playwright
 * changes it, and this copy is then brought up to date.
 */
const PLAYWRIGHT_DISABLED_FEATURES = [
  'AvoidUnnecessaryBeforeUnloadCheckSync',
  'DestroyProfileOnBrowserClose',
  'HttpsUpgrades',
  'HttpsFirstBalancedModeAutoEnable',
  'LensOverlay',
  'MediaRouter',
  'PaintHolding',
  'ThirdPartyStoragePartitioning',
  'AvoidCorsURLLoaderRestartOnRedirect',
  'TcpPortRandomizationWin',
  'OptimizationHints',
  'NetworkTimeServiceQuerying',
  'AimEnabled',
  'PreconnectToSearch',
  'msForceBrowserSignIn',
  'msEdgeUpdateLaunchServicesPreferredVersion',
];

/**
 * The full browser, run headless, gives each browser context a window with an address bar, and
 * preloads that bar's two WebUI popups in a renderer of their own: one more renderer for every
 * context a test opens, which no test ever shows (docs/performance.md, "Test run"). The headless
 * shell has no address bar; this matters where the full browser runs.
 */
const OUR_DISABLED_FEATURES = ['WebUIOmniboxPopup', 'WebUIOmniboxAimPopup'];

/**
 * Debian's headless shell of Chromium (package chromium-headless-shell), the same build of Blink
 * and V8 as /usr/bin/chromium without a browser's window and its UI around each page: what
 * Playwright itself runs for headless tests. Over two browser suites it took a third less of
 * the browser's CPU and a quarter of the wall time (docs/performance.md, "Test run"). Where it
 * is not installed, the full browser runs the same tests.
 */
const HEADLESS_SHELL = '/usr/bin/chromium-headless-shell';
export const FULL_BROWSER = '/usr/bin/chromium';

/** The Chromium the browser tests run: CHROMIUM_PATH, else the headless shell, else the browser. */
function chromiumExecutable(): string {
  return process.env.CHROMIUM_PATH ?? (existsSync(HEADLESS_SHELL) ? HEADLESS_SHELL : FULL_BROWSER);
}

/** How the browser tests launch Debian's Chromium (never a browser Playwright downloads). */
export function chromiumLaunchOptions(executablePath = chromiumExecutable()): LaunchOptions {
  return {
    executablePath,
    // Playwright's list is dropped here and restated, with ours, in the one below.
    ignoreDefaultArgs: [`--disable-features=${PLAYWRIGHT_DISABLED_FEATURES.join(',')}`],
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      // Compositing in software in the browser process, as --disable-gpu leaves it, without a
      // GPU process beside it: 8 % less of the browser's CPU over two suites, measured in turn
      // (docs/performance.md, "Test run"), on a CI run that is CPU-bound.
      '--disable-gpu-compositing',
      '--in-process-gpu',
      `--disable-features=${[...PLAYWRIGHT_DISABLED_FEATURES, ...OUR_DISABLED_FEATURES].join(',')}`,
    ],
  };
}

export function launchChromium(): Promise<Browser> {
  return chromium.launch(chromiumLaunchOptions());
}
