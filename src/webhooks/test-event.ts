import type { Config } from '../config/schema.ts';
import type { Clock } from '../core/ports.ts';
import type { HostResolver } from './address-policy.ts';
import { configuredPoster, type PostResult } from './post.ts';
import { testEventBody, testWebhookId } from './service.ts';

/**
 * The test event (`testEventBody`) POSTed to an endpoint now, signed with its secret, through the
 * same poster and address policy as real deliveries (`webhookReach`); not queued and not logged.
 * The API's `/webhooks/:id/test` and `mailsvc webhook test` both send through here.
 */
export async function sendTestEvent(
  deps: { config: Config; webhookHosts: HostResolver; clock: Clock },
  endpoint: { url: string; secret: string },
): Promise<PostResult & { sent: string }> {
  const poster = configuredPoster(deps.config, deps.webhookHosts, deps.clock);
  const sent = testEventBody(deps.config.server.hostname, deps.clock.now());
  try {
    return { ...(await poster.post(endpoint.url, sent, endpoint.secret, testWebhookId())), sent };
  } finally {
    poster.close();
  }
}
