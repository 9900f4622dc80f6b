import { describe, expect, it } from 'vitest';
import { poolFor, poolProblem, type PoolInput, type PoolSettings } from '../../src/delivery/pool-choice.ts';

const delivery: PoolSettings = {
  sourceAddresses: [
    { address: '203.0.113.10', ehlo: 'mta1.example.com' },
    { address: '203.0.113.11', ehlo: 'mta2.example.com' },
    { address: '2001:db8::25', ehlo: 'mta6.example.com' },
  ],
  pools: { transactional: ['203.0.113.10'], bulk: ['203.0.113.11', '2001:db8::25'], vip: ['203.0.113.10', '203.0.113.11'] },
  streamPools: { broadcast: 'bulk' },
};

const input = (over: Partial<PoolInput>): PoolInput => ({ domainPool: null, workspacePool: null, stream: 'transactional', ...over });

describe('poolFor', () => {
  it('takes the most specific setting: domain, then workspace, then stream, then every address', () => {
    expect(poolFor(input({ domainPool: 'vip', workspacePool: 'transactional', stream: 'broadcast' }), delivery)).toStrictEqual({
      name: 'vip',
      from: 'domain',
      addresses: ['203.0.113.10', '203.0.113.11'],
    });
    expect(poolFor(input({ workspacePool: 'transactional', stream: 'broadcast' }), delivery)).toStrictEqual({
      name: 'transactional',
      from: 'workspace',
      addresses: ['203.0.113.10'],
    });
    expect(poolFor(input({ stream: 'broadcast' }), delivery)).toStrictEqual({ name: 'bulk', from: 'stream', addresses: ['203.0.113.11', '2001:db8::25'] });
    expect(poolFor(input({ stream: 'transactional' }), delivery)).toStrictEqual({
      name: null,
      from: 'default',
      addresses: ['203.0.113.10', '203.0.113.11', '2001:db8::25'],
    });
  });

  it('passes over a name the configuration no longer has, and says so', () => {
    expect(poolFor(input({ domainPool: 'gone', workspacePool: 'vip' }), delivery)).toStrictEqual({
      name: 'vip',
      from: 'workspace',
      addresses: ['203.0.113.10', '203.0.113.11'],
      warning: `the domain's pool "gone" is not in delivery.pools; sending from the workspace's pool "vip"`,
    });
    expect(poolFor(input({ domainPool: 'gone', workspacePool: 'old', stream: 'broadcast' }), delivery)).toStrictEqual({
      name: 'bulk',
      from: 'stream',
      addresses: ['203.0.113.11', '2001:db8::25'],
      warning: `the domain's pool "gone" and the workspace's pool "old" are not in delivery.pools; sending from the stream's pool "bulk"`,
    });
    expect(poolFor(input({ workspacePool: 'old' }), delivery)).toMatchObject({
      name: null,
      from: 'default',
      warning: `the workspace's pool "old" is not in delivery.pools; sending from every source address`,
    });
  });

  it('never takes a name for a property every object has', () => {
    expect(poolFor(input({ domainPool: 'constructor' }), delivery)).toMatchObject({ name: null, from: 'default', warning: expect.stringContaining('"constructor"') });
  });

  it('leaves the choice to the kernel when no source address is configured', () => {
    const none: PoolSettings = { sourceAddresses: [], pools: {}, streamPools: {} };
    expect(poolFor(input({}), none)).toStrictEqual({ name: null, from: 'default', addresses: [] });
    // A pool named while addresses were configured, then all of them removed.
    expect(poolFor(input({ domainPool: 'bulk' }), none)).toMatchObject({ name: null, addresses: [], warning: expect.stringContaining('"bulk"') });
  });

  it('gives the same default list each time for the same configuration', () => {
    expect(poolFor(input({}), delivery).addresses).toBe(poolFor(input({}), delivery).addresses);
  });
});

describe('poolProblem', () => {
  it('accepts a configured name or none, and names the configured ones otherwise', () => {
    expect(poolProblem(delivery.pools, 'bulk')).toBeNull();
    expect(poolProblem(delivery.pools, null)).toBeNull();
    expect(poolProblem(delivery.pools, 'bluk')).toBe('Unknown pool "bluk": delivery.pools has transactional, bulk, vip');
    expect(poolProblem({}, 'bulk')).toBe('Unknown pool "bulk": no pools are configured (delivery.pools)');
  });
});
