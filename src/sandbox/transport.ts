import type { Clock, DnsResolver, Logger } from '../core/ports.ts';
import type { Recorded } from '../delivery/outcome.ts';
import type { SmtpSendRequest, SmtpSendResult, SmtpTransport } from '../delivery/transport.ts';
import { verpRecipientId } from '../delivery/verp.ts';
import { inboundRepo } from '../store/inbound.ts';
import type { RecipientRow } from '../store/messages.ts';
import { sandboxRepo } from '../store/sandbox.ts';
import { checkDkim } from './dkim.ts';
import { sendFeedback, type DeliveredCopy, type FeedbackDeps } from './feedback.ts';
import { SANDBOX_HOST, simulationFor, type Feedback } from './outcomes.ts';

export interface SandboxTransportDeps {
  clock: Clock;
  log: Logger;
  /** Our own published records, where the DKIM check finds the selector's key. */
  zone: DnsResolver;
  /** The inbound pipeline's dependencies (its database, clock, codecs) for simulated reports. */
  feedback: FeedbackDeps;
}

/** A transport that also hears how each attempt was recorded, to react once it is. */
export interface SandboxTransport extends SmtpTransport {
  afterOutcome(row: RecipientRow, recorded: Recorded): Promise<void>;
}

const MESSAGE_ID = /^Message-ID:[ \t]*(<[^>\r\n]{1,990}>)/im;

/**
 * Sandbox mode's transport: in place of a remote server, it keeps each recipient's final copy
 * (DKIM-signed, with its real envelope) in the sandbox inbox, checks the signature as a receiver
 * would, and answers as `simulationFor` says. Nothing leaves the machine. A complaint or an
 * unsubscribe follows once the delivery is recorded, as a report through the inbound pipeline.
 */
export function createSandboxTransport(deps: SandboxTransportDeps): SandboxTransport {
  const { db, verp } = deps.feedback;
  const pending = new Map<number, { kind: Feedback; copy: DeliveredCopy }>();

  return {
    fixedDestination: SANDBOX_HOST,
    async send(req: SmtpSendRequest): Promise<SmtpSendResult> {
      const sim = simulationFor(req.envelope.to);
      const id = verpRecipientId(verp, req.envelope.from);
      const found = id === null ? null : await inboundRepo.recipientWithMessage(db, Number(id));
      if (!found) {
        return {
          ok: false,
          stage: 'mail',
          code: 451,
          response: '451 4.3.0 Sandbox: the envelope sender names no recipient of ours',
          host: SANDBOX_HOST,
          temporary: true,
        };
      }
      const { message, recipient } = found;
      const at = deps.clock.now();
      const dkim = await checkDkim(req.raw, deps.zone);
      const response = `${sim.code} ${sim.text(req.envelope.to)}`;
      const captured = await sandboxRepo.insert(db, {
        workspace_id: message.workspace_id,
        domain: message.domain,
        email_id: message.id,
        recipient_id: recipient.id,
        mail_from: req.envelope.from,
        rcpt_to: req.envelope.to,
        message_id: MESSAGE_ID.exec(req.raw.subarray(0, 65_536).toString('latin1'))?.[1] ?? message.message_id_header,
        subject: message.subject,
        outcome: sim.outcome,
        response,
        dkim_result: dkim.result,
        dkim_detail: dkim.detail,
        size: req.raw.length,
        raw: req.raw,
        captured_at: at,
      });
      deps.log.debug({ phase: 'sandbox', capture: captured, email_id: message.id, rcpt: req.envelope.to, outcome: sim.outcome, dkim: dkim.result }, 'captured');
      if (sim.feedback) {
        pending.set(recipient.id, { kind: sim.feedback, copy: { recipientId: recipient.id, mailFrom: req.envelope.from, rcptTo: req.envelope.to, raw: req.raw, at } });
      }
      if (sim.code < 400) return { ok: true, code: sim.code, response, host: SANDBOX_HOST };
      return { ok: false, stage: 'rcpt', code: sim.code, response, host: SANDBOX_HOST, temporary: sim.code < 500 };
    },
    async afterOutcome(row, recorded) {
      const next = pending.get(row.id);
      pending.delete(row.id);
      if (!next || recorded.outcome !== 'delivered') return;
      try {
        const handled = await sendFeedback(deps.feedback, next.kind, { ...next.copy, at: deps.clock.now() });
        deps.log.debug({ phase: 'sandbox', report: handled.id, outcome: handled.outcome }, handled.summary);
      } catch (err) {
        deps.log.error({ phase: 'sandbox', err, recipient_id: row.id }, `the simulated ${next.kind} could not be recorded`);
      }
    },
    close: async () => pending.clear(),
    stats: () => ({ open: 0, perHost: {} }),
  };
}
