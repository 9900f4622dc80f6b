import type { DNSResolver } from 'mailauth';
import type { Clock, Logger } from '../core/ports.ts';
import { iso } from '../core/time.ts';
import type { GroupCommitter } from '../store/groupCommit.ts';
import { inboundMessagesRepo } from '../store/inboundMessages.ts';
import { checkAuth, type AuthResults } from './auth.ts';
import type { ReportParser } from './parse-pool.ts';
import type { InboundTarget } from './policy.ts';
import type { Captured } from './receive.ts';
import { receivedPayload, receivedView } from './received-payload.ts';
import { smtpError } from './replies.ts';

export type RouteTarget = Extract<InboundTarget, { kind: 'route' }>;

export interface RouteMailDeps {
  /** Messages arriving together share a commit (one WAL sync on SQLite), each in its own savepoint. */
  committer: GroupCommitter;
  clock: Clock;
  log: Logger;
  hostname: string;
  /** mailauth's lookups, through `dns.servers`. */
  resolver: DNSResolver;
  /** `inbound.inlineAttachmentBytes`. */
  inlineAttachmentBytes: number;
  /** The public base of the API (`tracking.baseUrl`), for attachment URLs. */
  baseUrl: string;
}

export interface RouteMail {
  captured: Captured;
  targets: RouteTarget[];
  mailFrom: string;
  remoteIp: string;
  helo: string | null;
}

const groupBy = <T, K>(items: T[], key: (t: T) => K): Map<K, T[]> => {
  const out = new Map<K, T[]>();
  for (const item of items) out.set(key(item), [...(out.get(key(item)) ?? []), item]);
  return out;
};

/**
 * A message for routes, from its captured bytes to the commit the 250 waits for: refuse one
 * over `inbound.maxSize` whole; read it in a parser worker; check SPF, DKIM, DMARC and ARC;
 * then, in one transaction per workspace, store it with its raw bytes and queue each route's
 * `email.received` delivery. Returns the stored ids. Nothing is stored when any step fails.
 */
export async function receiveForRoutes(deps: RouteMailDeps, parser: ReportParser, m: RouteMail): Promise<number[]> {
  const { captured } = m;
  if (captured.size > captured.raw.length) throw smtpError('tooBig');
  const parse = await parser.parseMail(captured.raw);
  if (parse.unparsed === 'unreadable') throw smtpError('unreadable');
  if (parse.unparsed) throw smtpError('parseTimeout');
  const mail = parse.parsed;
  const raw = captured.raw.head(captured.raw.length);
  const auth = await checkAuth({ raw, ip: m.remoteIp, helo: m.helo, mailFrom: m.mailFrom, hostname: deps.hostname }, deps.resolver).catch((err: Error): AuthResults => {
    deps.log.warn({ phase: 'auth', err }, 'authentication checks failed; results are temperror');
    return { spf: 'temperror', dkim: 'temperror', dmarc: 'temperror', arc: 'temperror' };
  });
  const inline = captured.size < deps.inlineAttachmentBytes;
  const now = deps.clock.now();
  // One transaction for every workspace the recipients belong to: all stored, or none.
  return deps.committer.run(async (tx) => {
    const ids: number[] = [];
    for (const [workspaceId, targets] of groupBy(m.targets, (t) => t.workspaceId)) {
      const envelope = { from: m.mailFrom, to: targets.map((t) => t.address) };
      // The id names the message in its own payload, so the row comes first, its view after.
      const id = await inboundMessagesRepo.insert(tx, {
        workspace_id: workspaceId,
        received_at: now,
        mail_from: m.mailFrom,
        recipients: JSON.stringify(envelope.to),
        remote_ip: m.remoteIp,
        helo: m.helo,
        size: captured.size,
        sha256: captured.sha256,
        parsed: '{}',
        raw,
      });
      const view = receivedView({ id, receivedAt: iso(now), envelope, mail, auth, baseUrl: deps.baseUrl });
      await inboundMessagesRepo.setParsed(tx, id, JSON.stringify(view));
      const deliveries = [...groupBy(targets, (t) => t.routeId)].map(([routeId, ts]) => ({
        routeId,
        payload: receivedPayload(view, mail, { id: routeId, to: ts.map((t) => t.address) }, inline),
      }));
      await inboundMessagesRepo.queueDeliveries(tx, { id, workspace_id: workspaceId }, deliveries, now);
      ids.push(id);
    }
    return ids;
  });
}
