import { recordEvent, type EventName, type ProviderReport } from '../../src/events/record.ts';
import type { Clock } from '../../src/core/ports.ts';
import type { Role } from '../../src/roles/index.ts';
import { messageWith } from '../helpers/db.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import type { StoreKind } from '../helpers/stores.ts';

/** Polls `check` until it holds (state the dispatcher writes has no event to await). */
export async function until<T>(check: () => Promise<T | undefined | false>, what: string, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

export interface HookWorld {
  server: TestServer;
  workspaceId: number;
  messageId: number;
  endpoint(url: string, events?: string[]): Promise<{ id: number; secret: string }>;
  /** Records an event for the message now, in its own transaction, as delivery or inbound would. */
  emit(event: EventName, extra?: { provider?: ProviderReport; bounceType?: 'permanent' | 'transient' }): Promise<string>;
  endpointRow(id: number): Promise<any>;
  log(id: number): Promise<any[]>;
}

/** A server running the webhooks role over a scratch database, and one message to tell about. */
export async function hookWorld(kind: StoreKind, opts: { clock?: Clock; webhooks?: Record<string, unknown>; roles?: Role[] } = {}): Promise<HookWorld> {
  const server = await startTestServer(kind, {
    clock: opts.clock,
    roles: opts.roles ?? ['webhooks'],
    config: { webhooks: { allowPrivateAddresses: true, timeout: 2, ...opts.webhooks }, delivery: { leaseSeconds: 5 } },
  });
  const { db, clock } = server.services;
  const { workspaceId, messageId } = await messageWith(db, ['sending'], clock.now());
  return {
    server,
    workspaceId,
    messageId,
    async endpoint(url, events) {
      const row = await server.services.webhooks.create(workspaceId, { url, events });
      return { id: row.id, secret: row.secret };
    },
    async emit(event, extra = {}) {
      const payload = await db.transaction((tx) =>
        recordEvent(tx, {
          workspaceId,
          emailId: messageId,
          recipientId: null,
          event,
          recipient: 'r0@example.org',
          ...(extra.bounceType ? { bounceType: extra.bounceType } : {}),
          provider: extra.provider ?? { response: '250 2.0.0 Ok', reporting_mta: 'mx.example.org' },
          at: clock.now(),
        }),
      );
      return JSON.stringify(payload);
    },
    endpointRow: (id) => server.services.webhooks.get(workspaceId, id),
    log: (id) => server.services.webhooks.attempts(workspaceId, id, { limit: 100 }),
  };
}
