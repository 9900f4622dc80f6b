import { ServiceError } from '../core/errors.ts';
import type { Clock, Logger } from '../core/ports.ts';
import { SmtpReplyError } from '../core/smtp-reply.ts';
import type { AcceptService } from '../messages/accept.ts';
import { isProblem, parseMailbox, type Mailbox } from '../messages/address.ts';
import type { RateDecision } from '../ratelimit/sliding.ts';
import type { Principal } from '../tenancy/principal.ts';
import { AuthFailures, insecureAuthAllowed } from './auth.ts';
import { readSubmission } from './message.ts';
import { fromServiceError, refuse } from './replies.ts';
import { trustedKeyFinder, type TrustedNetwork } from './trusted-networks.ts';

/** Idempotency over SMTP dedupes by the key alone: a client's retry carries a new Date and Message-ID. */
const SMTP_REQUEST_HASH = 'smtp-submission';

export interface SubmissionDeps {
  accept: AcceptService;
  authenticate(token: string | undefined): Promise<Principal>;
  /** The principal of a live API key by its id (a trusted network's key); a revoked or unknown one is refused. */
  principalOfKey(keyId: number): Promise<Principal>;
  rateLimit(principal: Principal): Promise<RateDecision>;
  clock: Clock;
  log: Logger;
  hostname: string;
}

/** Who is asking: the session's id (for the log) and the client's address, after any PROXY header. */
export interface SessionRef {
  id: string;
  ip: string;
}

/**
 * The decisions of SMTP submission that need the store, the clock or the tenants: what the
 * sessions ask for at AUTH, MAIL FROM and the end of DATA. Its answers are a value or an
 * `SmtpReplyError`, the reply the session gives. It runs on the event loop that holds the
 * services; the sessions may run on a thread of their own (`server.ts`).
 */
export interface SubmissionDesk {
  authenticate(session: SessionRef & { secure: boolean }, password: string | undefined): Promise<Principal>;
  /**
   * `principal` is the session's own, from AUTH; null when the client did not authenticate, and
   * then its address must be in a trusted network, whose key's principal is the answer: the one
   * the transaction runs as. With the session's own, the answer is null.
   */
  mailFrom(session: SessionRef, principal: Principal | null, address: string, declaredSize: number): Promise<Principal | null>;
  /** The id of the stored message, once it is durable. */
  data(session: SessionRef, principal: Principal, raw: Buffer, rcpts: readonly string[]): Promise<number>;
}

export interface DeskOptions {
  maxSize: number;
  allowInsecureAuth: boolean;
  loopbackInsecureAuth: boolean;
  trustedNetworks?: readonly TrustedNetwork[] | undefined;
}

export function submissionDesk(deps: SubmissionDeps, options: DeskOptions): SubmissionDesk {
  const log = deps.log.child({ role: 'submission' });
  const failures = new AuthFailures(deps.clock);
  const trustedKey = trustedKeyFinder(options.trustedNetworks ?? []);

  /** A service error as its reply, anything else logged and answered as a failure to store. */
  const replyFor = (err: unknown, session: SessionRef): SmtpReplyError => {
    if (err instanceof SmtpReplyError) return err;
    if (err instanceof ServiceError) return fromServiceError(err);
    log.error({ session: session.id, err }, 'submission failed');
    return refuse('storeFailed');
  };

  // The steps are made once, not as closures per call: on Node 20 a closure's optimised code is
  // dropped at every full collection and compiled again (bench/NOTES.md).
  const checkMailFrom = async (principal: Principal, address: string, declaredSize: number): Promise<void> => {
    if (declaredSize > options.maxSize) throw refuse('tooBig', `Message too big: at most ${options.maxSize} bytes`);
    if (address) {
      const sender = parseMailbox(address);
      if (isProblem(sender)) throw refuse('badAddress', `Sender address ${sender.problem}`);
      const problem = await deps.accept.sendingDomainProblem(principal, sender.domain);
      if (problem) throw refuse('senderDomain', `Sender domain ${sender.domain} not allowed: ${problem}`);
    }
    const decision = await deps.rateLimit(principal);
    if (!decision.allowed) {
      throw refuse('rateLimited', `Rate limit exceeded: ${decision.window.limit} messages per ${decision.window.name}; try again in ${decision.retryAfter} s`);
    }
  };

  /** Who a client that did not authenticate submits as: the key of the trusted network that holds its address. */
  const networkPrincipal = async (session: SessionRef): Promise<Principal> => {
    const keyId = trustedKey(session.ip);
    if (keyId === null) throw refuse('authRequired');
    try {
      return await deps.principalOfKey(keyId);
    } catch (err) {
      if (!(err instanceof ServiceError)) throw err;
      log.error(
        { phase: 'mail', session: session.id, ip: session.ip, key_id: keyId },
        `submission.trustedNetworks names API key ${keyId}, which is revoked or unknown: its network must authenticate`,
      );
      throw refuse('authRequired');
    }
  };

  const store = async (principal: Principal, raw: Buffer, addresses: readonly string[]): Promise<number> => {
    const rcpts: Mailbox[] = [];
    for (const address of addresses) rcpts.push(parseMailbox(address) as Mailbox);
    const { message, sender, idempotencyKey } = await readSubmission(raw, rcpts, deps.clock.now());
    const idem = idempotencyKey === null ? undefined : { key: idempotencyKey, hash: SMTP_REQUEST_HASH };
    const replayed = idem && (await deps.accept.replay(principal, idem));
    if (replayed) return replayed.body.id;
    const problem = await deps.accept.sendingDomainProblem(principal, message.from.domain);
    if (problem) throw refuse('senderDomain', `From domain ${message.from.domain} not allowed: ${problem}`);
    const senderProblem = sender && (await deps.accept.sendingDomainProblem(principal, sender.domain));
    if (senderProblem) throw refuse('senderDomain', `Sender domain ${sender.domain} not allowed: ${senderProblem}`);
    const result = await deps.accept.accept(principal, message, idem, 'smtp');
    return result.body.id;
  };

  return {
    async authenticate(session, password) {
      if (failures.blocked(session.ip)) throw refuse('tooManyAuthFailures');
      if (!session.secure && !insecureAuthAllowed(options, session.ip)) throw refuse('tlsFirst');
      try {
        return await deps.authenticate(password);
      } catch (err) {
        if (!(err instanceof ServiceError)) {
          log.error({ phase: 'auth', session: session.id, err }, 'key lookup failed');
          throw refuse('storeFailed');
        }
        failures.fail(session.ip);
        log.info({ phase: 'auth', session: session.id, ip: session.ip }, 'AUTH refused');
        throw refuse('badCredentials');
      }
    },

    async mailFrom(session, principal, address, declaredSize) {
      try {
        const acting = principal ?? (await networkPrincipal(session));
        await checkMailFrom(acting, address, declaredSize);
        return principal ? null : acting;
      } catch (err) {
        throw replyFor(err, session);
      }
    },

    async data(session, principal, raw, addresses) {
      try {
        return await store(principal, raw, addresses);
      } catch (err) {
        throw replyFor(err, session);
      }
    },
  };
}
