import { describe, expect, it } from '@jest/globals';
import { stripeReachNote } from '../src/pages/settings/stripe-reach.js';

/** The note under Stripe's webhook URL on Settings, Processor (src/pages/settings/stripe-reach.ts). */
describe('stripeReachNote', () => {
  it('says a URL on this machine is out of Stripe’s reach, with the Stripe CLI’s way to try it here', () => {
    for (const url of [
      'http://localhost:3000/processor/stripe/7f0c',
      'http://127.0.0.1:3890/processor/stripe/7f0c',
      'https://[::1]:8443/processor/stripe/7f0c',
      'http://LOCALHOST.:3000/processor/stripe/7f0c',
    ]) {
      const note = stripeReachNote(url);
      expect(note?.text).toContain('Stripe cannot reach this URL');
      // Apart from the words: the page shows `stripe listen --forward-to <url>` as code.
      expect(note?.text).not.toContain('stripe listen');
      expect(note?.forwardTo).toBe(url);
    }
  });

  it('asks for https where the host is public but the scheme is http', () => {
    expect(stripeReachNote('http://retention.example.com/processor/stripe/7f0c')).toEqual({
      text: "Stripe sends events only to an https URL: set BASE_URL to the service's https address.",
    });
  });

  it('says nothing of a public https URL', () => {
    expect(stripeReachNote('https://retention.example.com/processor/stripe/7f0c')).toBeNull();
    expect(stripeReachNote('https://127.0.0.1.example.com/processor/stripe/7f0c')).toBeNull();
  });
});
