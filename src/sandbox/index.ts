import type { SmtpTransport } from '../delivery/transport.ts';
import type { Services } from '../services.ts';
import { createSandboxTransport, type SandboxTransport, type SandboxTransportDeps } from './transport.ts';
import { ownZone } from './zone.ts';

export { SANDBOX_DOMAIN, SIMULATIONS } from './outcomes.ts';

/** The sandbox transport's dependencies, taken from the services of one process. */
export function sandboxDeps(services: Services): SandboxTransportDeps {
  const { db, clock, log, metrics, config, tokens } = services;
  return {
    clock,
    log,
    zone: ownZone(db, config.server.hostname),
    feedback: { db, clock, log, metrics, verp: tokens.verp, unsubscribe: tokens.unsubscribe, hostname: config.server.hostname },
  };
}

/** What a delivery worker takes in sandbox mode: the capturing transport and its outcome hook. */
export function sandboxDelivery(services: Services): { transport: SmtpTransport; afterOutcome: SandboxTransport['afterOutcome'] } {
  const transport = createSandboxTransport(sandboxDeps(services));
  return { transport, afterOutcome: transport.afterOutcome };
}
