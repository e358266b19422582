import { describe, expect, it } from '@jest/globals';
import {
  createReceiverResolver,
  createWebhookSender,
  ipv6Bytes,
  neverAllowedRange,
  nonPublicRange,
  receiverLookup,
  RefusedAddressError,
} from '@retention/domain';

describe('nonPublicRange', () => {
  it.each([
    ['127.0.0.1', 'loopback'],
    ['127.255.255.254', 'loopback'],
    ['10.1.2.3', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.1', 'private'],
    ['169.254.169.254', 'link-local'],
    ['100.64.0.1', 'carrier-grade NAT'],
    ['100.127.255.255', 'carrier-grade NAT'],
    ['224.0.0.1', 'multicast'],
    ['239.255.255.250', 'multicast'],
    ['0.0.0.0', 'reserved'],
    ['255.255.255.255', 'reserved'],
    ['240.0.0.1', 'reserved'],
    ['192.0.0.8', 'reserved'],
    ['192.0.2.1', 'reserved'],
    ['198.18.0.1', 'reserved'],
    ['198.51.100.7', 'reserved'],
    ['203.0.113.9', 'reserved'],
    ['::1', 'loopback'],
    ['::', 'reserved'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['::ffff:10.0.0.1', 'private'],
    ['64:ff9b::a9fe:a9fe', 'link-local'],
    ['64:ff9b::192.168.0.1', 'private'],
    ['fe80::1', 'link-local'],
    ['fe80::1%eth0', 'link-local'],
    ['fc00::1', 'private'],
    ['fd12:3456::1', 'private'],
    ['fec0::1', 'private'],
    ['ff02::1', 'multicast'],
    ['2001:db8::1', 'reserved'],
    ['2001::1', 'reserved'],
    ['2002:7f00:1::1', 'reserved'],
    ['3fff::1', 'reserved'],
    ['100::1', 'reserved'],
    ['not-an-address', 'reserved'],
    ['', 'reserved'],
  ])('refuses %s as %s', (address, range) => {
    expect(nonPublicRange(address)).toBe(range);
  });

  it.each([
    '8.8.8.8',
    '1.1.1.1',
    '172.32.0.1',
    '100.128.0.1',
    '192.169.0.1',
    '223.255.255.255',
    '::ffff:8.8.8.8',
    '64:ff9b::808:808',
    '2606:4700:4700::1111',
    '2a00:1450:4001::200e',
  ])('allows the public address %s', (address) => {
    expect(nonPublicRange(address)).toBeNull();
  });
});

describe('ipv6Bytes', () => {
  it.each([
    ['::', [...Array(16).fill(0)]],
    ['::1', [...Array(15).fill(0), 1]],
    ['::ffff:1.2.3.4', [...Array(10).fill(0), 0xff, 0xff, 1, 2, 3, 4]],
    ['1:2:3:4:5:6:7:8', [0, 1, 0, 2, 0, 3, 0, 4, 0, 5, 0, 6, 0, 7, 0, 8]],
    ['1:2:3:4:5:6:1.2.3.4', [0, 1, 0, 2, 0, 3, 0, 4, 0, 5, 0, 6, 1, 2, 3, 4]],
    ['FE80::AB', [0xfe, 0x80, ...Array(13).fill(0), 0xab]],
  ])('parses %s', (text, bytes) => {
    expect(ipv6Bytes(text)).toEqual(bytes);
  });

  it.each(['1::2::3', '1:2:3:4:5:6:7:8:9', '12345::', '::1.2.3.256', 'g::1', '1:2:3:4:5:6:7'])('rejects %s', (text) => {
    expect(ipv6Bytes(text)).toBeNull();
  });
});

describe('receiverLookup, public only', () => {
  const publicOnlyLookup = receiverLookup(createReceiverResolver(), false);
  const lookup = (host: string, all: boolean) =>
    new Promise<{ error: NodeJS.ErrnoException | null; address: unknown }>((resolve) =>
      publicOnlyLookup(host, { all }, (error, address) => resolve({ error, address })),
    );

  it.each([false, true])('refuses a name that resolves only to loopback (all: %s)', async (all) => {
    const { error } = await lookup('localhost', all);
    expect(error).toBeInstanceOf(RefusedAddressError);
    // The owner learns that the name points inside, not where: the address is for the server log.
    expect(error!.message).toMatch(
      /^refused: localhost does not resolve to a public address; check the host name \(receivers must be on/,
    );
    expect(error!.message).not.toMatch(/127\.0\.0\.1|::1|loopback/);
    expect(error).toMatchObject({ address: expect.stringMatching(/^(127\.0\.0\.1|::1)$/), range: 'loopback' });
  });

  it('passes an IP literal through the same check', async () => {
    const { error } = await lookup('10.0.0.7', false);
    expect(error!.message).toMatch(/^refused: 10\.0\.0\.7 is a private address/);
  });
});

/**
 * With WEBHOOK_ALLOW_PRIVATE_NETWORKS=true (npm start, a developer's receiver on loopback or the
 * office network), link-local and the cloud metadata services stay refused: a walk found
 * `https://169.254.169.254/latest/meta-data` accepted and contacted under `npm start`, and the
 * delivery log shows the first 4 KB of an answer.
 */
describe('with private networks allowed', () => {
  it.each([
    ['169.254.169.254', 'link-local'],
    ['169.254.0.1', 'link-local'],
    ['fe80::1', 'link-local'],
    ['fe80::1%eth0', 'link-local'],
    ['::ffff:169.254.169.254', 'link-local'],
    ['fd00:ec2::254', 'cloud metadata'],
    ['100.100.100.200', 'cloud metadata'],
  ])('still refuses %s (%s)', (address, range) => {
    expect(neverAllowedRange(address)).toBe(range);
  });

  it.each(['127.0.0.1', '::1', '10.0.0.7', '192.168.1.20', 'fd00::7', '100.64.0.1', '8.8.8.8'])(
    'allows %s',
    (address) => {
      expect(neverAllowedRange(address)).toBeNull();
    },
  );

  const privateLookup = receiverLookup(createReceiverResolver(), true);
  const lookup = (host: string) =>
    new Promise<{ error: NodeJS.ErrnoException | null; address: unknown }>((resolve) =>
      privateLookup(host, { all: true }, (error, address) => resolve({ error, address })),
    );

  it('lets a lookup reach loopback, and refuses the metadata address through it', async () => {
    const loopback = await lookup('127.0.0.1');
    expect(loopback.error).toBeNull();
    const metadata = await lookup('169.254.169.254');
    expect(metadata.error).toBeInstanceOf(RefusedAddressError);
    expect(metadata.error!.message).toBe(
      'refused: 169.254.169.254 is a link-local address; receivers must be on the public internet ' +
        '(even with WEBHOOK_ALLOW_PRIVATE_NETWORKS=true: cloud metadata services answer there)',
    );
  });

  it.each(['https://169.254.169.254/latest/meta-data', 'https://[fd00:ec2::254]/latest', 'https://[fe80::1]/hook'])(
    'sends nothing to %s, saying why',
    async (url) => {
      const sender = createWebhookSender({ timeoutMs: 3000, baseUrl: 'http://localhost', allowPrivateNetworks: true });
      try {
        const result = await sender.send({ url, secret: 'whsec_dev', body: Buffer.from('{}') });
        expect(result).toMatchObject({ succeeded: false, httpStatus: null });
        expect(result.error).toMatch(
          /^refused: .+ is a (link-local|cloud metadata) address; .*even with WEBHOOK_ALLOW/,
        );
      } finally {
        sender.close();
      }
    },
  );
});
