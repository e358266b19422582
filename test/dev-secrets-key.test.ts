import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from '@jest/globals';
import { loadConfig } from '@retention/core';
import { developmentSecretsKey, withDevelopmentSecretsKey } from '@retention/runtime';

describe('npm start without SECRETS_KEY', () => {
  it('makes a development key once, keeps it in a private file for the next start, and says so', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'dev-key-'));
    try {
      const file = path.join(dir, '.secrets-key.dev');
      const said: string[] = [];
      const first = developmentSecretsKey(file, (text) => said.push(text));
      expect(loadConfig({ SECRETS_KEY: first }).secretsKey).toHaveLength(32);
      expect((await stat(file)).mode & 0o777).toBe(0o600);
      expect(said[0]).toMatch(/SECRETS_KEY is not set: made a development key.*git-ignored.*openssl rand -base64 32/);
      expect(said.join('\n')).not.toContain(first);
      const second = developmentSecretsKey(file, (text) => said.push(text));
      expect(second).toBe(first);
      expect(said[1]).toMatch(/using the development key in/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('is the operator CLI’s SECRETS_KEY too when none is set, and never one that is set', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'dev-key-'));
    try {
      const file = path.join(dir, '.secrets-key.dev');
      expect(withDevelopmentSecretsKey({ PATH: '/bin' }, file)).toEqual({ PATH: '/bin' });
      const key = developmentSecretsKey(file, () => {});
      expect(withDevelopmentSecretsKey({ PATH: '/bin' }, file)).toEqual({ PATH: '/bin', SECRETS_KEY: key });
      expect(withDevelopmentSecretsKey({ SECRETS_KEY: ' ' }, file)).toEqual({ SECRETS_KEY: key });
      expect(withDevelopmentSecretsKey({ SECRETS_KEY: 'set' }, file)).toEqual({ SECRETS_KEY: 'set' });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
