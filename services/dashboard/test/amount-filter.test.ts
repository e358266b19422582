import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { BrowserContext, Locator, Page } from 'playwright-core';
import { hashPassword, loadFixtures } from '@retention/domain';
import { eventually, testSecretsKeyBytes } from '@retention/testkit';
import { desktopPage, PASSWORD, signInThroughForm, useDashboardWorld } from './support/dashboard-world.js';
import { checkPage } from './support/page-checks.js';

/**
 * The Campaigns list's Amount filter (docs/dashboard-ui.md, "Amount"), in a real headless
 * Chromium against the real API: a currency (the workspace's display currency unless one is
 * applied) and a minimum and a maximum typed in major units, applied as one history entry whose
 * address holds minor units; the rows, the line saying what is applied and the export follow it;
 * a bad amount is said at its box and not applied; Back undoes it; Clear amount drops it.
 */
const world = useDashboardWorld();

const EMAIL = 'owner@amounts.test';
/** Campaigns as [name, currency, amount in minor units]: $100.00 and ¥10,000 are both 10000. */
const CAMPAIGNS = [
  ['usd50', 'usd', 5000],
  ['usd100', 'usd', 10000],
  ['usd250', 'usd', 25050],
  ['usd900', 'usd', 90000],
  ['jpy10000', 'jpy', 10000],
  ['jpy500', 'jpy', 500],
  ['eur200', 'eur', 20000],
] as const;
let context: BrowserContext;
let page: Page;

beforeAll(async () => {
  const { db } = world.current;
  await loadFixtures(db, testSecretsKeyBytes(), {
    workspaces: [
      {
        key: 'amounts',
        name: 'Amounts',
        display_currency: 'usd',
        users: [{ key: 'owner', email: EMAIL, role: 'owner' }],
        customers: CAMPAIGNS.map(([name]) => ({
          key: name,
          email: `${name}@amount-customers.test`,
          subscriptions: [{ key: `s-${name}` }],
        })),
        campaigns: CAMPAIGNS.map(([name, currency, amount]) => ({
          customer: name,
          psp_invoice_id: `in_amount_${name}`,
          status: 'in_flight' as const,
          currency,
          amount_cents: amount,
        })),
      },
    ],
  });
  await db('users')
    .where({ email: EMAIL })
    .update({ password_hash: await hashPassword(PASSWORD) });
  ({ context, page } = await desktopPage(world.current.browser));
  await signInThroughForm(page, world.current.url, EMAIL);
}, 60_000);

afterAll(async () => {
  await context?.close();
});

const table = () => page.getByRole('table', { name: 'Recovery campaigns' });
const amount = () => page.getByRole('group', { name: 'Amount' });
const currency = () => amount().getByRole('combobox', { name: 'Currency' });
const minimum = () => amount().getByRole('textbox', { name: 'Minimum' });
const maximum = () => amount().getByRole('textbox', { name: 'Maximum' });
const apply = () => amount().getByRole('button', { name: 'Apply amount' });
const query = () => Object.fromEntries(new URL(page.url()).searchParams);

/** The invoice ids the list shows, once they are those of `names` (10 s at most). */
async function expectCampaigns(names: readonly string[]): Promise<void> {
  const read = async () =>
    (
      await table()
        .getByRole('row')
        .filter({ has: page.getByRole('cell') })
        .getByRole('link', { name: /^in_amount_/ })
        .allTextContents()
    ).sort();
  const expected = names.map((name) => `in_amount_${name}`).sort();
  await eventually(async () => JSON.stringify(await read()) === JSON.stringify(expected)).catch(() => undefined);
  expect(await read()).toEqual(expected);
}

/** The text of what the element's `aria-describedby` names. */
const description = (locator: Locator) =>
  locator.evaluate((element) =>
    (element.getAttribute('aria-describedby') ?? '')
      .split(' ')
      .map((id: string) => element.ownerDocument.getElementById(id)?.textContent ?? '')
      .join(' '),
  );

const ALL = CAMPAIGNS.map(([name]) => name);

describe('the Campaigns list’s Amount filter', () => {
  it('filters by an amount typed in major units, says a bad one at its box, and Back undoes it', async () => {
    await page.goto(`${world.current.url}/dashboard/campaigns`);
    await page.getByRole('heading', { level: 1, name: 'Campaigns' }).waitFor();
    await expectCampaigns(ALL);
    // No currency is applied, and the select says so (it said USD over a list of every currency).
    await expect(currency().inputValue()).resolves.toBe('');
    await expect(currency().locator('option:checked').textContent()).resolves.toBe('Any currency');
    const before = await page.evaluate<number>('history.length');

    // An amount needs a currency: said at the select and the box, nothing applied.
    await minimum().fill('100');
    await apply().click();
    await expect(amount().getByRole('alert').textContent()).resolves.toBe(
      'Choose a currency: amounts compare only within one.',
    );
    await expect(currency().getAttribute('aria-invalid')).resolves.toBe('true');
    await expect(minimum().getAttribute('aria-invalid')).resolves.toBe('true');
    expect(new URL(page.url()).search).toBe('');

    // With an amount in a box, the currency chosen waits for Apply, and the line says so.
    await currency().selectOption({ label: 'USD' });
    await amount().getByText('Apply to filter in USD.').waitFor();
    expect(new URL(page.url()).search).toBe('');

    // "Open campaigns over $100": 100 is 10000 cents, the minimum included.
    await apply().click();
    await eventually(() => query().min_amount === '10000');
    expect(query()).toEqual({ currency: 'usd', min_amount: '10000' });
    await expectCampaigns(['usd100', 'usd250', 'usd900']);
    await expect(page.evaluate<number>('history.length')).resolves.toBe(before + 1);
    await amount().getByText('Amount: $100.00 or more').waitFor();
    await expect(page.getByRole('link', { name: 'Export CSV' }).getAttribute('href')).resolves.toMatch(
      /[?&]currency=usd&min_amount=10000&/,
    );

    // Both ends, with cents: 99.50 to 250.50 (25050 cents, included); Enter applies too.
    await minimum().fill('99.50');
    await maximum().fill('250.50');
    await maximum().press('Enter');
    await eventually(() => query().max_amount === '25050');
    expect(query()).toEqual({ currency: 'usd', min_amount: '9950', max_amount: '25050' });
    await expectCampaigns(['usd100', 'usd250']);
    await amount().getByText('Amount: $99.50 to $250.50').waitFor();

    // A bad amount is said at its box, and nothing is applied: the address and the rows stay.
    await maximum().fill('250.505');
    await apply().click();
    const refusal = amount().getByRole('alert');
    await expect(refusal.textContent()).resolves.toBe('USD amounts have at most 2 decimals.');
    await expect(maximum().getAttribute('aria-invalid')).resolves.toBe('true');
    await expect(description(maximum())).resolves.toContain('USD amounts have at most 2 decimals.');
    expect(query()).toEqual({ currency: 'usd', min_amount: '9950', max_amount: '25050' });
    // No serious axe violation, and nothing wider than a phone, with the refusal said.
    expect(await checkPage(page, 'campaigns-amount-refused')).toEqual([]);
    await maximum().fill('-5');
    await maximum().press('Enter');
    await expect(refusal.textContent()).resolves.toMatch(/^Type an amount in USD such as 100 or 99\.50/);
    await maximum().fill('50');
    await apply().click();
    await expect(refusal.textContent()).resolves.toBe('The minimum is more than the maximum.');
    await expect(minimum().getAttribute('aria-invalid')).resolves.toBe('true');
    expect(query()).toEqual({ currency: 'usd', min_amount: '9950', max_amount: '25050' });
    await expectCampaigns(['usd100', 'usd250']);
    // The next edit takes the sentence away.
    await maximum().fill('');
    await amount().getByRole('alert').waitFor({ state: 'detached' });

    // Yen have no decimals: 10000 is ¥10,000, and 10.5 is refused. The minimum still shows 99.50,
    // so the currency waits for Apply.
    await currency().selectOption({ label: 'JPY' });
    await amount().getByText('Apply to filter in JPY.').waitFor();
    expect(query().currency).toBe('usd');
    await minimum().fill('10.5');
    await apply().click();
    await expect(amount().getByRole('alert').textContent()).resolves.toBe('JPY amounts have no decimals.');
    await minimum().fill('10000');
    await apply().click();
    await eventually(() => query().currency === 'jpy');
    expect(query()).toEqual({ currency: 'jpy', min_amount: '10000' });
    await expectCampaigns(['jpy10000']);
    await amount().getByText('Amount: ¥10,000 or more').waitFor();

    // Back undoes each, the fields and the rows following the address.
    await page.goBack();
    await eventually(() => query().currency === 'usd');
    expect(query()).toEqual({ currency: 'usd', min_amount: '9950', max_amount: '25050' });
    await expectCampaigns(['usd100', 'usd250']);
    await expect(currency().inputValue()).resolves.toBe('usd');
    await expect(minimum().inputValue()).resolves.toBe('99.50');
    await expect(maximum().inputValue()).resolves.toBe('250.50');
    await page.goBack();
    await eventually(() => query().max_amount === undefined);
    await expectCampaigns(['usd100', 'usd250', 'usd900']);
    await expect(minimum().inputValue()).resolves.toBe('100');
    await page.goBack();
    await eventually(() => new URL(page.url()).search === '');
    await expectCampaigns(ALL);
    await expect(minimum().inputValue()).resolves.toBe('');
    expect(await amount().getByRole('button', { name: 'Clear amount' }).count()).toBe(0);
  });

  it('an address’s amount the list does not take is said in place of the list, nothing asked', async () => {
    const note = page.getByRole('alert').filter({ hasText: 'The address asks for' });
    await page.goto(`${world.current.url}/dashboard/campaigns?currency=usd&min_amount=99.5`);
    await note.waitFor();
    await expect(note.locator('p').allTextContents()).resolves.toEqual([
      'The address asks for the minimum amount “99.5”, which is not an amount in minor units.',
    ]);
    await expect(minimum().getAttribute('aria-invalid')).resolves.toBe('true');
    expect(await table().count()).toBe(0);
    // An amount without a currency, which the server would refuse: said, nothing asked.
    const asked = { campaigns: 0 };
    const count = (request: { url: () => string }) => {
      if (new URL(request.url()).pathname === '/dashboard/api/campaigns') asked.campaigns += 1;
    };
    page.on('request', count);
    await page.goto(`${world.current.url}/dashboard/campaigns?min_amount=10000`);
    await note.waitFor();
    page.off('request', count);
    await expect(note.locator('p').allTextContents()).resolves.toEqual([
      'The address asks for the minimum amount “10000”, without a currency: amounts compare only within one currency.',
    ]);
    expect(asked.campaigns).toBe(0);
    await note.getByRole('button', { name: 'Clear filters' }).click();
    await eventually(() => new URL(page.url()).search === '');
    await expectCampaigns(ALL);
  });

  it('a currency alone filters; Clear amount and Clear filters drop it', async () => {
    await page.goto(`${world.current.url}/dashboard/campaigns?currency=eur`);
    await page.getByRole('heading', { level: 1, name: 'Campaigns' }).waitFor();
    await expectCampaigns(['eur200']);
    await expect(currency().inputValue()).resolves.toBe('eur');
    await amount().getByText('Currency: EUR only').waitFor();
    await amount().getByRole('button', { name: 'Clear amount' }).click();
    await eventually(() => new URL(page.url()).search === '');
    await expectCampaigns(ALL);

    // Amounts no campaign has: the list's Clear filters drops them with the rest.
    await currency().selectOption({ label: 'USD' });
    await minimum().fill('1000000');
    await apply().click();
    await eventually(() => query().min_amount === '100000000');
    await page.getByRole('button', { name: 'Clear filters' }).click();
    await eventually(() => new URL(page.url()).search === '');
    await expectCampaigns(ALL);
    await expect(minimum().inputValue()).resolves.toBe('');
  });
  it('says why an address’s amounts are refused, each reason its own, and no applied line then', async () => {
    const note = page.getByRole('alert').filter({ hasText: 'The address asks for' });
    const refusals: [string, string][] = [
      // Bounds the wrong way round, in the units the boxes show (it said "not an amount in minor units").
      [
        'currency=usd&min_amount=500&max_amount=100',
        'The address asks for amounts from 5 USD to 1 USD: the minimum is more than the maximum.',
      ],
      [
        'currency=usd&min_amount=-5',
        'The address asks for the minimum amount “-5”, which is not an amount in minor units.',
      ],
      [
        'currency=usd&min_amount=1.5',
        'The address asks for the minimum amount “1.5”, which is not an amount in minor units.',
      ],
      [
        'currency=usd&min_amount=99999999999999999999',
        'The address asks for the minimum amount “99999999999999999999”, which is more than any campaign can be.',
      ],
    ];
    for (const [search, sentence] of refusals) {
      await page.goto(`${world.current.url}/dashboard/campaigns?${search}`);
      await note.waitFor();
      await expect(note.locator('p').allTextContents()).resolves.toEqual([sentence]);
      await expect(minimum().getAttribute('aria-invalid')).resolves.toBe('true');
      // Nothing is applied: no line says an amount is (it said "Amount: -$0.05 or more").
      await expect(
        amount()
          .getByText(/^(Amount|Currency):/)
          .count(),
      ).resolves.toBe(0);
      await expect(amount().getByRole('button', { name: 'Clear amount' }).count()).resolves.toBe(0);
      expect(await table().count()).toBe(0);
    }
    // The box shows it in dollars, as it would a taken amount.
    await expect(minimum().inputValue()).resolves.toBe('999999999999999999.99');
  });

  it('takes a currency in any case, and a code nobody uses lists nothing', async () => {
    await page.goto(`${world.current.url}/dashboard/campaigns?currency=JPY&min_amount=2500`);
    await expectCampaigns(['jpy10000']);
    await expect(currency().inputValue()).resolves.toBe('jpy');
    await expect(minimum().inputValue()).resolves.toBe('2500');
    await amount().getByText('Amount: ¥2,500 or more').waitFor();

    await page.goto(`${world.current.url}/dashboard/campaigns?currency=xyz`);
    await page.getByText('No campaigns match these filters.').waitFor();
    await expect(currency().locator('option:checked').textContent()).resolves.toBe('XYZ');
    await amount().getByText('Currency: XYZ only').waitFor();
  });

  it('applies a currency chosen with empty boxes at once, and Any currency drops it', async () => {
    await page.goto(`${world.current.url}/dashboard/campaigns`);
    await expectCampaigns(ALL);
    await currency().selectOption({ label: 'EUR' });
    await eventually(() => query().currency === 'eur');
    expect(query()).toEqual({ currency: 'eur' });
    await expectCampaigns(['eur200']);
    await currency().selectOption({ label: 'Any currency' });
    await eventually(() => new URL(page.url()).search === '');
    await expectCampaigns(ALL);
  });

  it('keeps the filter row still: applied or not, a refusal shown or not', async () => {
    await page.goto(`${world.current.url}/dashboard/campaigns`);
    await expectCampaigns(ALL);
    const from = page.getByRole('search', { name: 'Filter campaigns' }).getByLabel('First failed from');
    const where = async () => {
      const boxes = await Promise.all([currency(), apply(), from].map((one) => one.boundingBox()));
      return boxes.map((box) => [Math.round(box!.x), Math.round(box!.y)]);
    };
    const plain = await where();
    await currency().selectOption({ label: 'USD' });
    await minimum().fill('100');
    await apply().click();
    await amount().getByText('Amount: $100.00 or more').waitFor();
    expect(await where()).toEqual(plain);
    // A refusal is a line under the fields: the date fields beside them stay (they moved 6 px).
    await maximum().fill('1.234');
    await apply().click();
    await amount().getByRole('alert').waitFor();
    expect(await where()).toEqual(plain);
  });

  it('says to type more of an invoice id when its short start finds nothing', async () => {
    await page.goto(`${world.current.url}/dashboard/campaigns?q=in_amo`);
    await page
      .getByText(
        'No campaigns match these filters. To find an invoice by the start of its id, type in_ and at least 4 more characters.',
      )
      .waitFor();
    await page.goto(`${world.current.url}/dashboard/campaigns?q=in_amou`);
    await expectCampaigns(ALL);
    await page.goto(`${world.current.url}/dashboard/campaigns?q=zzzzz`);
    await page.getByText('No campaigns match these filters.', { exact: true }).waitFor();
  });
});
