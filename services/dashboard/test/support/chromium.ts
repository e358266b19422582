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
 * Headless Chromium gives each browser context a window with an address bar, and preloads that
 * bar's two WebUI popups in a renderer of their own: one more renderer for every context a test
 * opens, which no test ever shows (docs/performance.md, "Test run").
 */
const OUR_DISABLED_FEATURES = ['WebUIOmniboxPopup', 'WebUIOmniboxAimPopup'];

/** How the browser tests launch Debian's Chromium (never a browser Playwright downloads). */
export function chromiumLaunchOptions(
  executablePath = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
): LaunchOptions {
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
