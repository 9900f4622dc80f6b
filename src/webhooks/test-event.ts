import type { Config } from '../config/schema.ts';
import type { Clock } from '../core/ports.ts';
import type { HostResolver } from './address-policy.ts';
import { configuredPoster, type PostResult } from './post.ts';
import { testEventBody, testWebhookId } from './service.ts';

/**
 * The test event (`testEventBody`) POSTed to an endpoint now, signed with its secret, through the
 * same poster and address policy as real deliveries; not queued and not logged, like
 * `mailsvc webhook test`.
 */
export async function sendTestEvent(deps: { config: Config; webhookHosts: HostResolver; clock: Clock }, endpoint: { url: string; secret: string }): Promise<PostResult> {
  const poster = configuredPoster(deps.config, deps.webhookHosts, deps.clock);
  try {
    return await poster.post(endpoint.url, testEventBody(deps.config.server.hostname, deps.clock.now()), endpoint.secret, testWebhookId());
  } finally {
    poster.close();
  }
}
