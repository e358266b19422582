import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import express, { Router, type RequestHandler, type Response } from 'express';
import { compressPublic } from '../middleware/compress-public.js';

const DASHBOARD_PREFIX = '/dashboard';

/** The dashboard's own policy: scripts, styles and requests from this origin only; no framing. */
export const DASHBOARD_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
  "form-action 'self'",
].join('; ');

const here = path.dirname(fileURLToPath(import.meta.url));
const FAVICON = 'favicon.ico';

/**
 * Where the built dashboard may be: beside the bundled process (the image's dist/api.js
 * serves dist/dashboard), or the workspace package's Vite output when running from source.
 */
const DASHBOARD_BUILD_CANDIDATES = [
  path.join(here, 'dashboard'),
  path.resolve(here, '..', '..', '..', 'dashboard', 'dist'),
];

const securityHeaders: RequestHandler = (_req, res, next) => {
  res.setHeader('Content-Security-Policy', DASHBOARD_CSP);
  res.setHeader('X-Content-Type-Options', 'nosniff');
  // Invitation and reset links carry their token in the path: never pass it on to another site.
  res.setHeader('Referrer-Policy', 'no-referrer');
  res.setHeader('Cross-Origin-Opener-Policy', 'same-origin');
  next();
};

function notBuilt(res: Response): void {
  res
    .status(503)
    .setHeader('Cache-Control', 'no-store')
    .type('html')
    .send(
      [
        '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Dashboard not built</title></head>',
        '<body><main><h1>The dashboard has not been built</h1>',
        '<p>Build it from the repository root with <code>npm run build:dashboard</code> (or <code>npm run build</code>),',
        ' then reload this page. <code>npm start</code> and <code>npm run start:api</code> build it when needed.</p>',
        '</main></body></html>',
      ].join(''),
    );
}

/**
 * The single-page app under /dashboard: hashed assets with a year-long immutable cache, and
 * index.html (never cached, so a deploy is picked up at once) for every client route; `GET /`
 * redirected to it; and the favicon at /favicon.ico (and /dashboard/favicon.ico). Mounted at
 * the root after /dashboard/api, which answers its own paths; other methods fall through to
 * the API's JSON 404.
 */
export function dashboardPages(candidates: string[] = DASHBOARD_BUILD_CANDIDATES): Router {
  let found: string | undefined;
  const buildDirectory = () => (found ??= candidates.find((dir) => existsSync(path.join(dir, 'index.html'))));
  const serveAssets = new Map<string, RequestHandler>();
  const assetsOf = (dir: string) => {
    let handler = serveAssets.get(dir);
    if (!handler) {
      handler = express.static(path.join(dir, 'assets'), {
        index: false,
        redirect: false,
        fallthrough: false,
        immutable: true,
        maxAge: '365d',
      });
      serveAssets.set(dir, handler);
    }
    return handler;
  };

  /**
   * The icon browsers ask for at /favicon.ico (pages link the SVG in assets/): Vite copies it
   * from public/ to the build's root. Its name has no hash, so it is cached for a day only.
   */
  const favicon: RequestHandler = (req, res) => {
    securityHeaders(req, res, () => undefined);
    const dir = buildDirectory();
    const notFound = () => res.status(404).setHeader('Cache-Control', 'no-store').type('text').send('Not found');
    if (!dir) return notFound();
    res.setHeader('Cache-Control', 'public, max-age=86400');
    res.sendFile(path.join(dir, FAVICON), (error) => {
      if (error && !res.headersSent) notFound();
    });
  };

  const router = Router();
  router.get('/', (_req, res) => res.redirect(302, `${DASHBOARD_PREFIX}/`));
  router.get(`/${FAVICON}`, favicon);
  router.use(DASHBOARD_PREFIX, compressPublic, (req, res, next) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') return next();
    securityHeaders(req, res, () => undefined);
    const dir = buildDirectory();
    if (!dir) return notBuilt(res);
    if (req.path === `/${FAVICON}`) return favicon(req, res, next);
    if (req.path.startsWith('/assets/')) {
      req.url = req.url.slice('/assets'.length);
      return assetsOf(dir)(req, res, (error?: unknown) => {
        // A missing asset is a 404, never index.html: a stale page must not run HTML as a script.
        if (error) res.status(404).setHeader('Cache-Control', 'no-store').type('text').send('Not found');
      });
    }
    // Repeated slashes (`/dashboard//campaigns`, hand-typed or built as base + "/" + path): the
    // page they mean, at its one address. It began with /dashboard, so the target is this
    // origin's, never a `//host` one.
    const [pathPart, ...query] = req.originalUrl.split('?');
    if (/\/{2,}/.test(pathPart!)) {
      return res.redirect(301, [pathPart!.replace(/\/{2,}/g, '/'), ...query].join('?'));
    }
    if (req.originalUrl === DASHBOARD_PREFIX || req.originalUrl.startsWith(`${DASHBOARD_PREFIX}?`)) {
      return res.redirect(301, `${DASHBOARD_PREFIX}/${req.originalUrl.slice(DASHBOARD_PREFIX.length)}`);
    }
    res.setHeader('Cache-Control', 'no-store');
    res.sendFile(path.join(dir, 'index.html'), { lastModified: false, etag: false }, (error) => {
      if (error && !res.headersSent) notBuilt(res);
    });
  });
  return router;
}
