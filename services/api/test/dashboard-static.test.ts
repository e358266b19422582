import type { AddressInfo } from 'node:net';
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import express from 'express';
import { beforeAll, describe, expect, it } from '@jest/globals';
import { DASHBOARD_DIST, ensureDashboardBuilt } from '../../../scripts/dashboard-build.js';
import { DASHBOARD_CSP, dashboardPages } from '../src/dashboard/static.js';
import { useApi, workspaceWithToken } from './harness.js';

describe('the dashboard pages served by the API process', () => {
  const api = useApi();
  let script: string;

  beforeAll(async () => {
    await ensureDashboardBuilt();
    const assets = await readdir(path.join(DASHBOARD_DIST, 'assets'));
    script = assets.find((name) => /^index-[\w-]+\.js$/.test(name))!;
  }, 120_000);

  it('redirects / to /dashboard/', async () => {
    const reply = await api.current.get('/', undefined, { redirect: 'manual' });
    expect(reply.status).toBe(302);
    expect(reply.headers.get('location')).toBe('/dashboard/');
  });

  it('answers every client route with index.html, uncached, under a strict policy', async () => {
    for (const route of [
      '/dashboard/',
      '/dashboard/settings/tokens',
      '/dashboard/invite/abc',
      '/dashboard/sign-in?next=%2F',
    ]) {
      const reply = await api.current.get(route);
      expect([route, reply.status]).toEqual([route, 200]);
      expect(reply.headers.get('content-type')).toMatch(/^text\/html/);
      expect(reply.text).toContain('<div id="root">');
      expect(reply.headers.get('cache-control')).toBe('no-store');
      expect(reply.headers.get('content-security-policy')).toBe(DASHBOARD_CSP);
      expect(reply.headers.get('x-content-type-options')).toBe('nosniff');
      expect(reply.headers.get('referrer-policy')).toBe('no-referrer');
    }
    const bare = await api.current.get('/dashboard', undefined, { redirect: 'manual' });
    expect([bare.status, bare.headers.get('location')]).toEqual([301, '/dashboard/']);
  });

  it('redirects an address with repeated slashes to its page at its one address, query kept, never off this origin', async () => {
    for (const [asked, location] of [
      ['/dashboard//campaigns', '/dashboard/campaigns'],
      [
        '/dashboard///customers//x?status=lost&next=//evil.example',
        '/dashboard/customers/x?status=lost&next=//evil.example',
      ],
      ['/dashboard//evil.example/', '/dashboard/evil.example/'],
      ['/dashboard//assets/index.js', '/dashboard/assets/index.js'],
    ] as const) {
      const reply = await api.current.get(asked, undefined, { redirect: 'manual' });
      expect([asked, reply.status, reply.headers.get('location')]).toEqual([asked, 301, location]);
    }
  });

  it('serves hashed assets with a year-long immutable cache, and a missing one as 404 (never HTML)', async () => {
    const asset = await api.current.get(`/dashboard/assets/${script}`);
    expect(asset.status).toBe(200);
    expect(asset.headers.get('content-type')).toMatch(/javascript/);
    expect(asset.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    const missing = await api.current.get('/dashboard/assets/index-missing.js');
    expect(missing.status).toBe(404);
    expect(missing.headers.get('content-type')).not.toMatch(/html/);
    expect((await api.current.get('/dashboard/assets/../../package.json')).status).not.toBe(200);
  });

  it('compresses the built files and the API reference as the browser accepts (Brotli or gzip), never an API answer', async () => {
    const fetchWith = (route: string, acceptEncoding: string, token?: string) =>
      fetch(`${api.current.url}${route}`, {
        headers: { 'accept-encoding': acceptEncoding, ...(token && { authorization: `Bearer ${token}` }) },
      });
    for (const route of [`/dashboard/assets/${script}`, '/docs', '/openapi.json']) {
      for (const [accepted, used] of [
        ['br, gzip', 'br'],
        ['gzip', 'gzip'],
        ['identity', null],
      ] as const) {
        const reply = await fetchWith(route, accepted);
        expect([route, accepted, reply.status, reply.headers.get('content-encoding')]).toEqual([
          route,
          accepted,
          200,
          used,
        ]);
        expect(reply.headers.get('vary')).toMatch(/accept-encoding/i);
        expect((await reply.text()).length).toBeGreaterThan(1_000); // fetch undoes the encoding
      }
    }
    // Answers that can hold a secret or a session's data are never compressed (BREACH), however
    // large: a page of customers here.
    const { token } = await workspaceWithToken(api.current, {
      customers: Array.from({ length: 20 }, (_, index) => ({ key: `c${index}` })),
    });
    const list = await fetchWith('/api/v1/customers', 'br, gzip', token);
    expect(list.status).toBe(200);
    expect((await list.text()).length).toBeGreaterThan(2_000);
    expect(list.headers.get('content-encoding')).toBeNull();
  });

  it('answers /favicon.ico (and /dashboard/favicon.ico) with the icon, cached for a day', async () => {
    for (const route of ['/favicon.ico', '/dashboard/favicon.ico']) {
      const reply = await fetch(`${api.current.url}${route}`);
      expect([route, reply.status]).toEqual([route, 200]);
      expect(reply.headers.get('content-type')).toMatch(/^image\/(x-icon|vnd\.microsoft\.icon)/);
      expect(reply.headers.get('cache-control')).toBe('public, max-age=86400');
      expect(reply.headers.get('x-content-type-options')).toBe('nosniff');
      const bytes = Buffer.from(await reply.arrayBuffer());
      expect([bytes.readUInt16LE(0), bytes.readUInt16LE(2)]).toEqual([0, 1]); // an ICO file
    }
  });

  it('leaves /api/v1, /dashboard/api and other methods as they were', async () => {
    const v1 = await api.current.get('/api/v1/campaigns');
    expect(v1.status).toBe(401);
    const me = await api.current.get('/dashboard/api/me');
    expect([me.status, me.body.error.type]).toEqual([401, 'authentication_required']);
    const unknownApi = await api.current.get('/dashboard/api/nothing-here');
    expect(unknownApi.status).toBe(401);
    const post = await api.current.get('/dashboard/settings', undefined, { method: 'POST' });
    expect([post.status, post.body.error.type]).toEqual([404, 'not_found']);
  });
});

describe('a server without a dashboard build', () => {
  it('says how to build it, with a 503', async () => {
    const app = express();
    app.use(dashboardPages(['/nonexistent/dashboard-build']));
    const server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    try {
      const response = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/dashboard/settings`);
      expect(response.status).toBe(503);
      expect(response.headers.get('content-security-policy')).toBe(DASHBOARD_CSP);
      expect(await response.text()).toContain('npm run build:dashboard');
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
