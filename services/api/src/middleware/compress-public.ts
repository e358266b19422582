import compression from 'compression';

/**
 * gzip or Brotli, as the browser accepts, for what is the same for everyone: the dashboard's
 * built files (its script is some 230 KB, 73 KB gzipped) and the API reference. Never mounted in
 * front of a response that can hold a secret or a session's data (the dashboard API, /api/v1):
 * a compressed secret beside text an attacker chooses leaks through the length (BREACH).
 * Compressed on each request: the hashed assets are cached by browsers for a year, so each
 * browser asks once a deploy.
 */
export const compressPublic = compression();
