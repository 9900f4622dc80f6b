// The JSON line `mailsvc bounce parse FILE` prints for each file.

import type { BounceType, ParsedReport, ReportKind } from './types.ts';

export interface ParseOutput {
  file: string;
  kind: ReportKind;
  recipients: { address: string; status: string; smtp_code: number | null; bounce_type: BounceType; reason: string; diagnostic: string }[];
  feedback_type: string | null;
  original_message_id: string | null;
}

export function toParseOutput(file: string, report: ParsedReport): ParseOutput {
  // A success DSN (Action: delivered) lists no failed recipient; parseReport already leaves
  // those out, and this keeps the promise for reports built elsewhere.
  const failed = report.recipients.filter((r) => r.action === 'failed' || r.action === 'delayed');
  return {
    file,
    kind: report.kind,
    recipients: failed.map((r) => ({
      address: r.address,
      status: r.status,
      smtp_code: r.smtpCode,
      bounce_type: r.bounceType,
      reason: r.reason,
      diagnostic: r.diagnostic,
    })),
    feedback_type: report.feedbackType,
    original_message_id: report.originalMessageId,
  };
}
