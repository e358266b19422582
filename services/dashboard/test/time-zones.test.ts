import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { BrowserContext, Page } from 'playwright-core';
import { CAMPAIGN_EXPORT_COLUMNS } from '@retention/db';
import { hashPassword, loadFixtures } from '@retention/domain';
import { eventually, testSecretsKeyBytes } from '@retention/testkit';
import { PASSWORD, signInThroughForm, useDashboardWorld } from './support/dashboard-world.js';
import { screenshot } from './support/page-checks.js';

/**
 * The Campaigns list's days and the dashboard's formats across zones and browser languages
 * (docs/dashboard-ui.md, "Campaign date filters" and "Locale"), in a real Chromium whose context
 * sets `timezoneId` and `locale`, as support agents in Auckland (de-DE) and Los Angeles (en-US).
 *
 * One link, `from=2026-11-01&to=2026-11-02` (Nov 1, one day), and three campaigns around it:
 * - in_akl_early, 2026-10-31 12:00 UTC: Nov 1, 1 AM in Auckland, Oct 31 in Los Angeles;
 * - in_both, 2026-11-01 10:00 UTC: Nov 1 in both (11 PM in Auckland, 2 AM in Los Angeles);
 * - in_la_late, 2026-11-01 20:00 UTC: Nov 2, 9 AM in Auckland, Nov 1 noon in Los Angeles.
 * So Auckland's Nov 1 holds the first two, Los Angeles's the last two.
 */
const world = useDashboardWorld();

const EMAIL = 'agent@zones.test';
const AUCKLAND = 'Pacific/Auckland';
const LOS_ANGELES = 'America/Los_Angeles';
const DAYS = 'from=2026-11-01&to=2026-11-02';
const IN_AUCKLAND_DAYS = ['in_akl_early', 'in_both'];
const IN_LOS_ANGELES_DAYS = ['in_both', 'in_la_late'];
const ALL = ['in_akl_early', 'in_both', 'in_la_late'];

const contexts: BrowserContext[] = [];
let session: Awaited<ReturnType<BrowserContext['storageState']>> | undefined;

beforeAll(async () => {
  const { db } = world.current;
  await loadFixtures(db, testSecretsKeyBytes(), {
    workspaces: [
      {
        key: 'zones',
        name: 'Zones',
        display_currency: 'usd',
        users: [{ key: 'agent', email: EMAIL, role: 'owner' }],
        customers: [{ key: 'z', email: 'zed@example.com', subscriptions: [{ key: 'z-sub' }] }],
        campaigns: [
          {
            customer: 'z',
            psp_invoice_id: 'in_akl_early',
            amount_cents: 254_719,
            currency: 'usd',
            status: 'in_flight',
            first_failed_at: '2026-10-31T12:00:00.000Z',
          },
          {
            customer: 'z',
            psp_invoice_id: 'in_both',
            amount_cents: 1_000,
            currency: 'usd',
            status: 'in_flight',
            first_failed_at: '2026-11-01T10:00:00.000Z',
          },
          {
            customer: 'z',
            psp_invoice_id: 'in_la_late',
            amount_cents: 2_000,
            currency: 'usd',
            status: 'in_flight',
            first_failed_at: '2026-11-01T20:00:00.000Z',
          },
        ],
      },
    ],
  });
  await db('users')
    .where({ email: EMAIL })
    .update({ password_hash: await hashPassword(PASSWORD), name: 'Zed Agent' });
}, 120_000);

afterAll(async () => {
  await Promise.all(contexts.map((context) => context.close()));
});

/** A signed-in page in a browser context of its own, in `timezoneId` with the browser language `locale`. */
async function agent(timezoneId: string, locale = 'en-US', viewport = { width: 1280, height: 900 }): Promise<Page> {
  const context = await world.current.browser.newContext({
    viewport,
    acceptDownloads: true,
    timezoneId,
    locale,
    ...(session && { storageState: session }),
  });
  contexts.push(context);
  const page = await context.newPage();
  page.setDefaultTimeout(10_000);
  if (!session) {
    await signInThroughForm(page, world.current.url, EMAIL);
    session = await context.storageState();
  }
  return page;
}

async function openCampaigns(page: Page, search = ''): Promise<void> {
  await page.goto(`${world.current.url}/dashboard/campaigns${search}`);
  await page.getByRole('heading', { level: 1, name: 'Campaigns' }).waitFor();
}

/** The list's invoices, sorted, once the list shows `expected` (or what it shows after a wait). */
async function settlesTo(page: Page, expected: string[]): Promise<void> {
  let last: string[] = [];
  await eventually(async () => {
    last = (
      await page.getByRole('table', { name: 'Recovery campaigns' }).locator('tbody tr td:first-child').allTextContents()
    ).sort();
    return JSON.stringify(last) === JSON.stringify(expected);
  }).catch(() => undefined);
  expect(last).toEqual(expected);
}

describe('a shared Campaigns link with days', () => {
  it('lists the same campaigns in Auckland and in Los Angeles: the days are the link’s zone’s', async () => {
    const auckland = await agent(AUCKLAND, 'de-DE');
    const losAngeles = await agent(LOS_ANGELES);
    const link = `?${DAYS}&tz=${encodeURIComponent(AUCKLAND)}`;
    await openCampaigns(auckland, link);
    await openCampaigns(losAngeles, link);
    await settlesTo(auckland, IN_AUCKLAND_DAYS);
    await settlesTo(losAngeles, IN_AUCKLAND_DAYS);
  });

  it('writes the zone the days were picked in to the address, so the copied link lists the same rows elsewhere', async () => {
    const auckland = await agent(AUCKLAND, 'de-DE');
    await openCampaigns(auckland);
    await auckland.getByLabel('First failed from').fill('2026-11-01');
    await auckland.getByLabel('First failed before').fill('2026-11-02');
    await settlesTo(auckland, IN_AUCKLAND_DAYS);
    const address = new URL(auckland.url());
    expect(Object.fromEntries(address.searchParams)).toEqual({ from: '2026-11-01', to: '2026-11-02', tz: AUCKLAND });
    // Written readably (a slash is allowed in a query string), and read back as the same zone.
    expect(address.search).toContain(`tz=${AUCKLAND}`);
    // The export asks for the same zone.
    const exportHref = await auckland.getByRole('link', { name: 'Export CSV' }).getAttribute('href');
    expect(new URL(exportHref ?? '', world.current.url).searchParams.get('tz')).toBe(AUCKLAND);

    const losAngeles = await agent(LOS_ANGELES);
    await losAngeles.goto(address.href);
    await settlesTo(losAngeles, IN_AUCKLAND_DAYS);
  });

  it('names the zone of the days beside the fields, tied to them', async () => {
    const auckland = await agent(AUCKLAND, 'de-DE');
    await openCampaigns(auckland, `?${DAYS}`);
    const filters = auckland.getByRole('search', { name: 'Filter campaigns' });
    await filters.getByText(`Days in ${AUCKLAND} time.`).waitFor();
    const described = await auckland.getByLabel('First failed from').evaluate((field) =>
      (field.getAttribute('aria-describedby') ?? '')
        .split(' ')
        .map((id: string) => field.ownerDocument.getElementById(id)?.textContent)
        .join(' '),
    );
    expect(described).toContain(`Days in ${AUCKLAND} time.`);
    // A link without a zone is the viewer's days (the earlier rule), and the address now says which.
    await settlesTo(auckland, IN_AUCKLAND_DAYS);
    await eventually(() => Promise.resolve(new URL(auckland.url()).searchParams.get('tz') === AUCKLAND));
  });

  it('says in words that a link’s zone is not the viewer’s, and switches to the viewer’s zone on request', async () => {
    const losAngeles = await agent(LOS_ANGELES);
    await openCampaigns(losAngeles, `?${DAYS}&tz=${encodeURIComponent(AUCKLAND)}`);
    const filters = losAngeles.getByRole('search', { name: 'Filter campaigns' });
    await filters.getByText(`Days in ${AUCKLAND} time.`).waitFor();
    await filters.getByText(`This link's days are in ${AUCKLAND} time`).waitFor();
    await filters.getByText(`your time zone, ${LOS_ANGELES}`).waitFor();
    await settlesTo(losAngeles, IN_AUCKLAND_DAYS);

    await filters.getByRole('button', { name: `Use my time zone (${LOS_ANGELES})` }).click();
    await filters.getByText(`Days in ${LOS_ANGELES} time.`).waitFor();
    await settlesTo(losAngeles, IN_LOS_ANGELES_DAYS);
    expect(new URL(losAngeles.url()).searchParams.get('tz')).toBe(LOS_ANGELES);
    await expect(filters.getByText("This link's days").count()).resolves.toBe(0);
  });

  it('takes a zone without days as nothing: the days to pick are the viewer’s', async () => {
    const losAngeles = await agent(LOS_ANGELES);
    await openCampaigns(losAngeles, `?tz=${encodeURIComponent(AUCKLAND)}`);
    const filters = losAngeles.getByRole('search', { name: 'Filter campaigns' });
    await filters.getByText(`Days in ${LOS_ANGELES} time.`).waitFor();
    await expect(filters.getByText("This link's days").count()).resolves.toBe(0);
    await losAngeles.getByLabel('First failed from').fill('2026-11-01');
    await losAngeles.getByLabel('First failed before').fill('2026-11-02');
    await settlesTo(losAngeles, IN_LOS_ANGELES_DAYS);
    expect(new URL(losAngeles.url()).searchParams.get('tz')).toBe(LOS_ANGELES);
  });

  it.each([
    ['Mars%2FOlympus_Mons', 'Mars/Olympus_Mons'],
    ['%2B13:00', '+13:00'],
  ])(
    'takes an unknown zone (%s) as the viewer’s, with a note, never an error, and puts the viewer’s in the address',
    async (inAddress, shown) => {
      const losAngeles = await agent(LOS_ANGELES);
      await openCampaigns(losAngeles, `?${DAYS}&tz=${inAddress}`);
      const filters = losAngeles.getByRole('search', { name: 'Filter campaigns' });
      const note = filters.getByText(
        `The link's time zone "${shown}" is not one this browser knows, so the days are in your time zone`,
      );
      await note.waitFor();
      await filters.getByText(`Days in ${LOS_ANGELES} time.`).waitFor();
      await settlesTo(losAngeles, IN_LOS_ANGELES_DAYS);
      // A link copied from the address now carries the zone the days are in, not the unknown one;
      // the note stays for this page view.
      await eventually(() => Promise.resolve(new URL(losAngeles.url()).searchParams.get('tz') === LOS_ANGELES));
      expect(new URL(losAngeles.url()).search).toContain(`tz=${LOS_ANGELES}`);
      await note.waitFor();
      await expect(note.isVisible()).resolves.toBe(true);
    },
  );

  it('names a renamed zone as IANA does now: Asia/Kolkata, not the Asia/Calcutta Chromium reports', async () => {
    const kolkata = await agent('Asia/Kolkata');
    await openCampaigns(kolkata);
    const filters = kolkata.getByRole('search', { name: 'Filter campaigns' });
    await filters.getByText('Days in Asia/Kolkata time.').waitFor();
    await kolkata.getByLabel('First failed from').fill('2026-11-01');
    await eventually(() => Promise.resolve(new URL(kolkata.url()).searchParams.get('tz') === 'Asia/Kolkata'));
    await expect(filters.getByText(/Calcutta/).count()).resolves.toBe(0);
  });

  it('drops the unknown zone’s note with the days when Clear filters clears them', async () => {
    const losAngeles = await agent(LOS_ANGELES);
    await losAngeles.goto(`${world.current.url}/dashboard/settings/security-log?${DAYS}&tz=Mars%2FOlympus_Mons`);
    const filters = losAngeles.getByRole('search', { name: 'Filter the security log' });
    const note = filters.getByText(`The link's time zone "Mars/Olympus_Mons" is not one this browser knows`);
    await note.waitFor();
    await losAngeles.getByRole('button', { name: 'Clear filters' }).click();
    await eventually(async () => (await filters.getByLabel('Since').inputValue()) === '');
    // It stayed until a reload: about days no longer asked for, in a zone no longer in the address.
    await note.waitFor({ state: 'detached' });
    expect(new URL(losAngeles.url()).searchParams.get('tz')).toBeNull();
  });

  it('exports exactly the rows listed, in a file named after the days', async () => {
    const losAngeles = await agent(LOS_ANGELES);
    await openCampaigns(losAngeles, `?${DAYS}&tz=${encodeURIComponent(AUCKLAND)}`);
    await settlesTo(losAngeles, IN_AUCKLAND_DAYS);
    const [download] = await Promise.all([
      losAngeles.waitForEvent('download'),
      losAngeles.getByRole('link', { name: 'Export CSV' }).click(),
    ]);
    expect(download.suggestedFilename()).toBe('campaigns-2026-11-01-to-2026-11-02.csv');
    const [, ...lines] = (await readFile(await download.path(), 'utf8')).trimEnd().split('\n');
    const invoice = CAMPAIGN_EXPORT_COLUMNS.indexOf('psp_invoice_id');
    expect(lines.map((line) => line.split(',')[invoice]).sort()).toEqual(IN_AUCKLAND_DAYS);
  });

  it('names an export without days after its filters and the day it is exported, in the viewer’s zone', async () => {
    const dayIn = (timeZone: string) =>
      new Intl.DateTimeFormat('en-CA', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit' }).format(
        new Date(),
      );
    // A zone whose day is not UTC's right now: the file was `campaigns.csv`, and the server's
    // day is UTC's unless the page sends its zone.
    const zone = [LOS_ANGELES, 'Pacific/Pago_Pago', 'Pacific/Kiritimati'].find((one) => dayIn(one) !== dayIn('UTC'))!;
    const viewer = await agent(zone);
    await openCampaigns(viewer, '?status=in_flight');
    await settlesTo(viewer, ALL);
    const [download] = await Promise.all([
      viewer.waitForEvent('download'),
      viewer.getByRole('link', { name: 'Export CSV' }).click(),
    ]);
    expect(download.suggestedFilename()).toBe(`campaigns-in-flight-${dayIn(zone)}.csv`);
  });

  it('says the Overview counts UTC days where the viewer’s days are not UTC’s, and not where they are', async () => {
    const overviewNote = 'The Overview and its charts count UTC days';
    const losAngeles = await agent(LOS_ANGELES);
    await openCampaigns(losAngeles);
    await losAngeles.getByRole('search', { name: 'Filter campaigns' }).getByText(overviewNote).waitFor();
    const utc = await agent('UTC');
    await openCampaigns(utc);
    await utc.getByText('Days in UTC time.').waitFor();
    await expect(utc.getByText(overviewNote).count()).resolves.toBe(0);
  });

  it.each([
    ['link-zone', `tz=${encodeURIComponent(AUCKLAND)}`, IN_AUCKLAND_DAYS],
    ['unknown-zone', 'tz=%2B13:00', IN_LOS_ANGELES_DAYS],
  ])('fits its notes (%s) at 390 and 1280 px without sideways scrolling', async (name, tz, rows) => {
    for (const width of [390, 1280]) {
      const losAngeles = await agent(LOS_ANGELES, 'en-US', { width, height: 900 });
      await openCampaigns(losAngeles, `?${DAYS}&${tz}`);
      await settlesTo(losAngeles, rows);
      await screenshot(losAngeles, `campaigns-${name}-${width}`);
      const overflow = await losAngeles.evaluate<number>(
        'document.documentElement.scrollWidth - document.documentElement.clientWidth',
      );
      expect(overflow).toBe(0);
    }
  });
});

describe('formats in a de-DE browser', () => {
  it('writes money, days and months in English, as the page reads', async () => {
    const berlin = await agent('Europe/Berlin', 'de-DE');
    await openCampaigns(berlin);
    await settlesTo(berlin, ALL);
    const early = berlin.getByRole('row').filter({ hasText: 'in_akl_early' });
    await expect(early.getByRole('cell').nth(2).textContent()).resolves.toBe('$2,547.19');
    // Oct 31, 1 PM in Berlin, written as an English list writes it (not "31. Okt.").
    await expect(early.getByRole('cell').nth(5).textContent()).resolves.toBe('Oct 31');

    await berlin.goto(`${world.current.url}/dashboard/`);
    await berlin.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
    // The chart's table (in its disclosure): months and amounts as the page's English writes them.
    const revenue = berlin.getByRole('figure', { name: 'Failed and recovered revenue by month (USD)' });
    await revenue.waitFor();
    const table = await revenue.locator('table').textContent();
    expect(table).toContain('Oct 2026');
    expect(table).toContain('$2,547.19');
    expect(table).not.toMatch(/Okt|Nov\.|\d,\d\d\s?\$/);
  });

  it('keeps an English browser’s own conventions: en-GB writes the day first', async () => {
    const london = await agent('Europe/London', 'en-GB');
    await openCampaigns(london);
    await settlesTo(london, ALL);
    const early = london.getByRole('row').filter({ hasText: 'in_akl_early' });
    await expect(early.getByRole('cell').nth(2).textContent()).resolves.toBe('US$2,547.19');
    await expect(early.getByRole('cell').nth(5).textContent()).resolves.toBe('31 Oct');
  });
});
