import SMTPConnection, { type SMTPConnectionOptions } from 'nodemailer/lib/smtp-connection';
import type { NodemailerError } from 'nodemailer/lib/errors';
import { afterEach, describe, expect, it } from 'vitest';
import { createDnsResolver } from '../../src/dns/resolver.ts';
import { ManualClock } from '../helpers/clock.ts';
import { startTestDns, type TestDns } from '../helpers/dns-server.ts';
import { independentHosts, startProviderFarm, type FarmProviderSpec, type ProviderFarm } from '../helpers/provider-farm.ts';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(cleanups.splice(0).map((cleanup) => cleanup()));
});

const GOOGLE: FarmProviderSpec = {
  name: 'google',
  address: '127.0.0.2',
  mxHosts: ['aspmx.l.google.test', 'alt1.aspmx.l.google.test'],
  domains: ['g1.example', 'g2.example', 'g3.example'],
};
const MICROSOFT: FarmProviderSpec = {
  name: 'microsoft',
  address: '127.0.0.3',
  mxHosts: ['m1.mail.protection.outlook.test'],
  domains: ['m1.example'],
};

async function farm(providers: FarmProviderSpec[], clock?: ManualClock): Promise<{ farm: ProviderFarm; dns: TestDns }> {
  const dns = await startTestDns();
  cleanups.push(() => dns.close());
  const started = await startProviderFarm({ dns, providers, ...(clock ? { clock } : {}), waitTimeoutMs: 5000 });
  cleanups.push(() => started.close());
  return { farm: started, dns };
}

function connect(host: string, port: number, extra: SMTPConnectionOptions = {}): Promise<SMTPConnection> {
  const client = new SMTPConnection({ host, port, name: 'out.sender.test', ...extra });
  cleanups.push(async () => client.close());
  return new Promise((resolve, reject) => {
    // A refused greeting arrives as an 'error' event without the connect callback running.
    client.on('error', reject);
    client.connect((err) => (err ? reject(err) : resolve(client)));
  });
}

function send(client: SMTPConnection, to: string | string[], messageId = '<m@sender.test>'): Promise<string> {
  const raw = Buffer.from(`Message-ID: ${messageId}\r\nSubject: hi\r\n\r\nbody\r\n`);
  return new Promise((resolve, reject) => client.send({ from: 'bounce@sender.test', to }, raw, (err, info) => (err ? reject(err) : resolve(info!.response))));
}

async function rejection(promise: Promise<unknown>): Promise<NodemailerError> {
  try {
    await promise;
  } catch (err) {
    return err as NodemailerError;
  }
  throw new Error('expected a rejection');
}

/** nodemailer leaves the transaction open after a refused recipient; the next one needs RSET. */
function reset(client: SMTPConnection): Promise<void> {
  return new Promise((resolve, reject) => client.reset((err) => (err ? reject(err) : resolve())));
}

function closedByServer(client: SMTPConnection): Promise<void> {
  return new Promise((resolve) => client.once('end', () => resolve()));
}

describe('provider farm', () => {
  it('publishes MX and A records in the test DNS, and each provider receives on its own address at the shared port', async () => {
    const { farm: f, dns } = await farm([GOOGLE, MICROSOFT, ...independentHosts(2)]);
    const resolver = createDnsResolver([dns.address], 1000);
    expect(await resolver.resolveMx('g2.example')).toEqual(
      expect.arrayContaining([
        { exchange: 'aspmx.l.google.test', priority: 10 },
        { exchange: 'alt1.aspmx.l.google.test', priority: 20 },
      ]),
    );
    expect(await resolver.resolve4('alt1.aspmx.l.google.test')).toEqual(['127.0.0.2']);
    expect(await resolver.resolveMx('host2.test')).toEqual([{ exchange: 'mx.host2.test', priority: 10 }]);
    expect(await resolver.resolve4('mx.host2.test')).toEqual(['127.1.0.2']);

    for (const domain of ['g1.example', 'g3.example', 'm1.example', 'host1.test', 'host2.test']) {
      const [mx] = await resolver.resolveMx(domain);
      const [address] = await resolver.resolve4(mx!.exchange);
      // A bound source address is what the sink reports as the client's.
      const client = await connect(address!, f.port, { localAddress: '127.0.0.9' });
      expect(await send(client, `user@${domain}`, `<${domain}@sender.test>`)).toMatch(/^250/);
      client.close();
    }

    expect(f.provider('google').accepted.map((m) => m.to)).toEqual(['user@g1.example', 'user@g3.example']);
    expect(f.provider('microsoft').accepted).toHaveLength(1);
    expect(f.provider('host1').accepted).toHaveLength(1);
    expect(f.provider('host2').accepted[0]).toMatchObject({
      provider: 'host2',
      from: 'bounce@sender.test',
      to: 'user@host2.test',
      messageId: '<host2.test@sender.test>',
      helo: 'out.sender.test',
      clientAddress: '127.0.0.9',
    });
    expect(f.totalAccepted()).toBe(5);
  });

  it('refuses relaying for a domain the provider does not host, until the domain is added', async () => {
    const { farm: f, dns } = await farm([GOOGLE, MICROSOFT]);
    const client = await connect(GOOGLE.address, f.port);
    const refused = await rejection(send(client, 'user@m1.example'));
    expect(refused.responseCode).toBe(550);
    expect(f.provider('google').refused).toMatchObject([{ reason: 'relay', to: 'user@m1.example' }]);
    await reset(client);

    f.addDomains('google', ['late.example']);
    const resolver = createDnsResolver([dns.address], 1000);
    expect(await resolver.resolveMx('late.example')).toHaveLength(2);
    expect(await send(client, 'user@late.example')).toMatch(/^250/);
  });

  it('answers the (limit+1)th concurrent connection with the configured 421 and serves again once one closes', async () => {
    const reply = '421 4.7.0 [TSS04] Messages from 127.0.0.1 temporarily deferred due to unexpected volume or user complaints';
    const { farm: f } = await farm([{ ...GOOGLE, maxConnections: 2, tooManyConnectionsReply: reply }]);
    const google = f.provider('google');
    const first = await connect(GOOGLE.address, f.port);
    await connect(GOOGLE.address, f.port);

    const turnedAway = await rejection(connect(GOOGLE.address, f.port));
    expect(turnedAway.responseCode).toBe(421);
    expect(turnedAway.response).toContain('[TSS04]');
    expect(google.connectionsPeak).toBe(3);
    expect(google.refused).toMatchObject([{ reason: 'connections', reply, to: null }]);
    await f.waitFor(() => google.connections === 2, 'the refused connection to close');

    first.close();
    await f.waitFor(() => google.connections === 1, 'the first connection to close');
    const again = await connect(GOOGLE.address, f.port);
    expect(await send(again, 'user@g1.example')).toMatch(/^250/);

    f.setBehaviour('google', { maxConnections: null });
    await connect(GOOGLE.address, f.port);
    await connect(GOOGLE.address, f.port);
    expect(google.connectionsPeak).toBe(4);
    expect(google.connectionList.filter((c) => c.refused !== null)).toHaveLength(1);
  });

  it('throttles a recipient beyond perMinute in its sliding window with a 421 that closes the connection', async () => {
    const clock = new ManualClock(0);
    const { farm: f } = await farm([{ ...GOOGLE, perMinute: { limit: 3, windowMs: 500 } }], clock);
    const google = f.provider('google');
    const client = await connect(GOOGLE.address, f.port);
    for (const at of [0, 100, 200]) {
      clock.set(at);
      expect(await send(client, `u${at}@g1.example`)).toMatch(/^250/);
    }
    clock.set(300);
    const closed = closedByServer(client);
    const throttled = await rejection(send(client, 'late@g1.example'));
    expect(throttled.responseCode).toBe(421);
    expect(throttled.response).toContain('4.7.28');
    await closed;
    expect(google.refused).toMatchObject([{ at: 300, reason: 'rate', to: 'late@g1.example' }]);

    // At 500 the recipient of 0 has left the window; those of 100 and 200 have not.
    clock.set(500);
    const next = await connect(GOOGLE.address, f.port);
    expect(await send(next, 'again@g1.example')).toMatch(/^250/);
    expect((await rejection(send(next, 'over@g1.example'))).responseCode).toBe(421);

    expect(google.accepted.map((m) => m.at)).toEqual([0, 100, 200, 500]);
    expect(google.maxInWindow(500)).toBe(3);
    expect(google.maxInWindow(501)).toBe(4);
    expect(google.refused.map((r) => r.reason)).toEqual(['rate', 'rate']);
  });

  it('blocks every recipient for forMs after N accepted messages, once, and can be re-armed or lifted at run time', async () => {
    const clock = new ManualClock(0);
    const reply = '451 4.7.500 Server busy. Please try again later from [127.0.0.1]. (S77714)';
    const { farm: f } = await farm([{ ...MICROSOFT, block: { afterMessages: 2, reply, forMs: 1000 } }], clock);
    const microsoft = f.provider('microsoft');
    const client = await connect(MICROSOFT.address, f.port);
    await send(client, 'a@m1.example');
    await send(client, 'b@m1.example');

    clock.set(999);
    const blocked = await rejection(send(client, 'c@m1.example'));
    expect(blocked.responseCode).toBe(451);
    expect(blocked.response).toContain('4.7.500 Server busy');
    await reset(client);
    // Not a 421: the connection stays open, and the block ends on time.
    clock.set(1000);
    for (const to of ['c@m1.example', 'd@m1.example', 'e@m1.example']) expect(await send(client, to)).toMatch(/^250/);

    f.setBehaviour('microsoft', { block: { afterMessages: 1, reply, forMs: 60_000 } });
    await send(client, 'f@m1.example');
    expect((await rejection(send(client, 'g@m1.example'))).responseCode).toBe(451);
    await reset(client);
    f.setBehaviour('microsoft', { block: null });
    expect(await send(client, 'g@m1.example')).toMatch(/^250/);

    expect(microsoft.accepted.map((m) => m.to.split('@')[0])).toEqual(['a', 'b', 'c', 'd', 'e', 'f', 'g']);
    expect(microsoft.refused.map((r) => [r.reason, r.to])).toEqual([
      ['block', 'c@m1.example'],
      ['block', 'g@m1.example'],
    ]);
  });

  it('counts messages per connection and in total, waits for a total, and finds messages accepted twice', async () => {
    const { farm: f } = await farm([GOOGLE, MICROSOFT]);
    const one = await connect(GOOGLE.address, f.port);
    const two = await connect(GOOGLE.address, f.port);
    const third = await connect(MICROSOFT.address, f.port);
    const waiting = f.waitForTotal(7);
    await Promise.all([
      (async () => {
        for (let i = 0; i < 3; i++) await send(one, `a${i}@g1.example`, `<a${i}@sender.test>`);
      })(),
      send(two, ['x@g2.example', 'y@g3.example'], '<xy@sender.test>'),
      send(third, 'm@m1.example', '<m@sender.test>'),
    ]);
    // The same message to the same recipient again: a duplicate; to another recipient: not.
    await send(two, 'x@g2.example', '<xy@sender.test>');
    await waiting;

    const google = f.provider('google');
    expect(google.accepted).toHaveLength(6);
    expect(google.messagesPerConnectionPeak).toBe(3);
    expect(google.connectionsPeak).toBe(2);
    expect(google.connections).toBe(2);
    expect(f.totalAccepted()).toBe(7);
    expect(
      f
        .accepted()
        .map((m) => m.provider)
        .filter((p) => p === 'microsoft'),
    ).toHaveLength(1);
    expect(f.duplicates()).toMatchObject([{ messageId: '<xy@sender.test>', to: 'x@g2.example' }]);

    const timedOut = await rejection(f.waitForTotal(8, 50));
    expect(timedOut.message).toContain('8 accepted messages; have 7 (google: 6 accepted, 0 refused, 2 open; microsoft: 1 accepted');
  });
});
