import type { SandboxOutcome } from '../store/sandbox.ts';

/** The recipient domain whose addresses simulate what receivers do; it need not be one of ours. */
export const SANDBOX_DOMAIN = 'sandbox.mailsvc.test';

/**
 * What the sandbox reports as the receiving server (`provider.reporting_mta`): a name of its own,
 * the same host today.
 * @alias
 */
export const SANDBOX_HOST = SANDBOX_DOMAIN;

/** What a receiver does with a message later, after it accepted it. */
export type Feedback = 'complaint' | 'unsubscribe';

export interface Simulation {
  outcome: SandboxOutcome;
  /** The SMTP reply the sandbox gives in place of the receiver, quoted from Postfix. */
  code: number;
  text: (address: string) => string;
  feedback?: Feedback;
}

const accepted = '2.0.0 Ok: queued in the sandbox inbox';

/**
 * `<local>@sandbox.mailsvc.test` (a `+tag` allowed, e.g. `bounced+1@`, so that one address can be
 * tried again after it was suppressed) → what a real receiver would have done. Bounces and
 * deferrals are SMTP replies, judged like any other; complaints and unsubscribes come back later
 * as reports, through the inbound pipeline.
 */
export const SIMULATIONS: Record<string, Simulation> = {
  delivered: { outcome: 'delivered', code: 250, text: () => accepted },
  bounced: { outcome: 'bounced', code: 550, text: (a) => `5.1.1 <${a}>: Recipient address rejected: User unknown in local recipient table` },
  deferred: { outcome: 'deferred', code: 451, text: (a) => `4.3.0 <${a}>: Temporary lookup failure` },
  complained: { outcome: 'complained', code: 250, text: () => accepted, feedback: 'complaint' },
  unsubscribed: { outcome: 'unsubscribed', code: 250, text: () => accepted, feedback: 'unsubscribe' },
};

/** Any other recipient is delivered into the inbox. */
export function simulationFor(address: string): Simulation {
  const at = address.lastIndexOf('@');
  if (address.slice(at + 1).toLowerCase() !== SANDBOX_DOMAIN) return SIMULATIONS.delivered!;
  const local = address.slice(0, at).toLowerCase().split('+')[0]!;
  return Object.hasOwn(SIMULATIONS, local) ? SIMULATIONS[local]! : SIMULATIONS.delivered!;
}
