import { describe, expect, it } from '@jest/globals';
import { declineCategoryOf, EVENT_TYPES } from '@retention/core';
import { DECLINE_CODE_LABELS, EVENT_TYPE_LABELS, declineCodeLabel, eventTypeLabel } from '../src/labels.js';

/** The labels table (src/labels.ts) against the server's own sets, so a new code gets words. */
describe('labels', () => {
  it('names every event type of the catalog, and nothing else', () => {
    expect(Object.keys(EVENT_TYPE_LABELS).sort()).toEqual([...EVENT_TYPES].sort());
  });

  it('names only decline codes the category table knows (a typo would never show)', () => {
    const unknown = Object.keys(DECLINE_CODE_LABELS).filter((code) => declineCategoryOf(code) === 'unknown');
    expect(unknown).toEqual([]);
  });

  it('shows a code it has no words for humanized, never blank', () => {
    expect(eventTypeLabel('ping')).toBe('Ping');
    expect(declineCodeLabel('some_new_code')).toBe('Some new code');
    expect(declineCodeLabel('insufficient_funds')).toBe('Insufficient funds');
  });
});
