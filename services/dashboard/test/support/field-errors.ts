import { expect } from '@jest/globals';
import type { Locator } from 'playwright-core';

/** A field's accessible description: the texts of what its `aria-describedby` names, in order. */
export function description(field: Locator): Promise<string> {
  return field.evaluate((element) =>
    (element.getAttribute('aria-describedby') ?? '')
      .split(' ')
      .filter(Boolean)
      .map((id: string) => element.ownerDocument.getElementById(id)?.textContent ?? '')
      .join(' '),
  );
}

/**
 * A server's refusal about one field, shown at it (docs/dashboard-ui.md, "Field errors"): the
 * only alert in `form` is `sentence`, the field is `aria-invalid` and described by it, and the
 * API's name of the field (`param`, e.g. `display_currency`) is nowhere in the form.
 */
export async function expectFieldError(form: Locator, field: Locator, sentence: string, param: string): Promise<void> {
  const alerts = form.getByRole('alert').filter({ hasText: /./ });
  await alerts.first().waitFor();
  await expect(alerts.allTextContents()).resolves.toEqual([sentence]);
  await expect(field.getAttribute('aria-invalid')).resolves.toBe('true');
  await expect(description(field)).resolves.toMatch(new RegExp(`${escape(sentence)}$`));
  await expect(form.textContent()).resolves.not.toContain(`${param}:`);
}

const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * A field whose refusal went as soon as it was edited (docs/dashboard-ui.md, "Field errors"): no
 * alert left in `form`, the field no longer `aria-invalid`, nor described by `sentence`. It stayed,
 * marked invalid beside the corrected text, until the next submit.
 */
export async function expectFieldErrorGone(form: Locator, field: Locator, sentence: string): Promise<void> {
  await expect(form.getByRole('alert').filter({ hasText: /./ }).allTextContents()).resolves.toEqual([]);
  await expect(field.getAttribute('aria-invalid')).resolves.toBeNull();
  await expect(description(field)).resolves.not.toContain(sentence);
  await expect(form.getByText(sentence, { exact: true }).count()).resolves.toBe(0);
}
