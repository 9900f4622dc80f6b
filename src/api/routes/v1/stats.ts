import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { QueueControl } from '../../../messages/queue-control.ts';
import type { ReputationService } from '../../../stats/reputation.ts';
import type { StatsService } from '../../../stats/service.ts';
import { authErrors, bearerSecurity, errors } from '../../schemas/common.ts';

const n = (description?: string) => Type.Integer(description ? { description } : {});
const DayStats = Type.Object({
  day: Type.String({ description: 'UTC day, YYYY-MM-DD' }),
  stream: Type.String(),
  sent: n('recipients accepted that day, suppressed ones excepted'),
  delivered: n(),
  bounced: Type.Object({ permanent: n(), transient: n(), blocked: n() }),
  complained: n(),
  opened: n(),
  clicked: n(),
  unsubscribed: n(),
});
const QueueStats = Type.Object({
  scheduled: n(),
  queued: n(),
  sending: n(),
  deferred: n('recipients waiting for a retry'),
  oldest_deferred_since: Type.Union([Type.String(), Type.Null()], { description: 'when the oldest deferred recipient first became due' }),
  oldest_deferred_age_seconds: Type.Union([Type.Integer(), Type.Null()]),
  next_retry_at: Type.Union([Type.String(), Type.Null()], { description: 'when the next deferred recipient is tried again' }),
  held: n('recipients held by queue control (POST /queue/hold)'),
  groups: Type.Array(
    Type.Object({
      group: Type.String({ description: 'the destination group (`unresolved`: domains no delivery has looked up yet)' }),
      queued: n(),
      deferred: n(),
      held: n(),
      connections: n('concurrent connections the group may take'),
      per_minute: Type.Union([Type.Integer(), Type.Null()], { description: 'messages per minute; null: unlimited' }),
      suspended_until: Type.Optional(Type.String({ description: 'while a reply has suspended the group' })),
      reason: Type.Optional(Type.String({ description: 'the reply that suspended it' })),
      on_hold: Type.Boolean({ description: 'a hold names the whole group: its mail is held until released' }),
      hold_reason: Type.Optional(Type.String()),
    }),
    { description: 'waiting recipients per destination group, held groups and the largest first (at most 100)' },
  ),
});
const Rate = {
  delivered: n('recipients delivered in the window'),
  complained: n('complaints received in the window'),
  rate: Type.Union([Type.Number(), Type.Null()], { description: 'complained ÷ delivered in percent (0.1 = 0.1%), four decimals; null when nothing was delivered' }),
  level: Type.Union([Type.Literal('ok'), Type.Literal('warning'), Type.Literal('critical')], { description: 'warning from 0.1%, critical from 0.3%' }),
};
const Reputation = Type.Object({
  from: Type.String({ description: 'the window: the last 7 days up to now' }),
  to: Type.String(),
  thresholds: Type.Object({
    warning: Type.Number(),
    critical: Type.Number(),
    pause_broadcast_at: Type.Union([Type.Number(), Type.Null()], {
      description: "compliance.pauseBroadcastAt: the broadcast rate that holds a domain's broadcast stream; null: never",
    }),
  }),
  workspace: Type.Object({ ...Rate, streams: Type.Array(Type.Object({ stream: Type.String(), ...Rate })) }),
  domains: Type.Array(
    Type.Object({
      domain: Type.String(),
      stream: Type.String(),
      ...Rate,
      held: Type.Optional(Type.Boolean({ description: "broadcast only: a standing hold keeps this domain's broadcast mail waiting" })),
    }),
    { description: 'per sending domain and stream with mail delivered or complained about in the window' },
  ),
});
const tags = ['stats'];

/** What the console's overview shows; a domain-scoped key sees its domain's mail. */
export const statsRoutes =
  (stats: StatsService, queueControl: QueueControl, reputation: ReputationService): FastifyPluginAsyncTypebox =>
  async (app) => {
    app.get(
      '/stats/daily',
      {
        schema: {
          tags,
          security: bearerSecurity,
          querystring: Type.Object({ days: Type.Optional(Type.Integer({ minimum: 1, maximum: 90, default: 30 })) }, { additionalProperties: false }),
          response: { 200: Type.Object({ from: Type.String(), to: Type.String(), data: Type.Array(DayStats) }), ...authErrors, 422: errors[422] },
        },
      },
      async (request) => stats.daily(request.principal, request.query.days ?? 30),
    );

    app.get(
      '/stats/queue',
      {
        schema: { tags, security: bearerSecurity, response: { 200: QueueStats, ...authErrors } },
      },
      async (request) => ({ ...(await stats.queue(request.principal)), groups: await queueControl.groups(request.principal) }),
    );

    app.get('/stats/reputation', { schema: { tags, security: bearerSecurity, response: { 200: Reputation, ...authErrors } } }, async (request) =>
      reputation.forKey(request.principal),
    );
  };
