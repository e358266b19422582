import { Router } from 'express';
import { compressPublic } from '../middleware/compress-public.js';
import type { OpenApiDocument } from '../openapi/document.js';
import { renderDocsPage } from '../openapi/docs-page.js';

export const DOCUMENTATION_PATHS = ['/openapi.json', '/docs'] as const;

/** The OpenAPI document and its readable page. Both are public, like any API reference. */
export function documentationRoutes(document: OpenApiDocument): Router {
  const json = JSON.stringify(document, null, 2);
  const page = renderDocsPage(document);
  const router = Router();

  router.get('/openapi.json', compressPublic, (_req, res) => {
    // Lets browser-based OpenAPI tools on other origins load it; it holds nothing private.
    res.setHeader('Access-Control-Allow-Origin', '*');
    res.setHeader('X-Content-Type-Options', 'nosniff');
    res.type('application/json').send(json);
  });

  router.get('/docs', compressPublic, (_req, res) => {
    res.setHeader('Content-Security-Policy', page.contentSecurityPolicy);
    res.setHeader('X-Content-Type-Options', 'nosniff');
    res.setHeader('Referrer-Policy', 'no-referrer');
    res.type('html').send(page.html);
  });

  return router;
}
