// `mailsvc bounce explain`: for each failed recipient of a report, the signals the classifier
// found and the rule that decided, so an operator can see why an address was or was not
// suppressed.

import { explainWords } from './classify.ts';
import type { ParsedReport } from './types.ts';

const FROM: Record<string, string> = {
  report: 'from the report',
  'reply text': 'from the reply text',
  'reply code': "derived from the reply code's class",
  delay: 'derived from the delay notice',
  none: 'derived: nothing gave one',
};

export interface ExplainOutput {
  file: string;
  kind: ParsedReport['kind'];
  feedback_type: string | null;
  recipients: {
    address: string;
    bounce_type: string;
    reason: string;
    status: string;
    status_from: string;
    smtp_code: number | null;
    command: string | null;
    words: string[];
    decided_by: string[];
    diagnostic: string;
  }[];
}

export function toExplainOutput(file: string, report: ParsedReport): ExplainOutput {
  return {
    file,
    kind: report.kind,
    feedback_type: report.feedbackType,
    recipients: report.recipients
      .filter((r) => r.action === 'failed' || r.action === 'delayed')
      .map((r) => {
        const x = r.explanation;
        const complaint = report.kind === 'complaint';
        return {
          address: r.address,
          bounce_type: r.bounceType,
          reason: r.reason,
          status: r.status,
          status_from: x?.statusFrom ?? 'none',
          smtp_code: r.smtpCode,
          command: x?.command ?? null,
          words: x ? explainWords(x.text) : [],
          decided_by: x ? x.decidedBy : [complaint ? `feedback report (Feedback-Type: ${report.feedbackType ?? 'none'})` : 'no classification'],
          diagnostic: r.diagnostic,
        };
      }),
  };
}

/** The human-readable form: one block per file, a few lines per recipient. */
export function formatExplanation(out: ExplainOutput): string {
  const lines = [`${out.file}: ${out.kind}${out.feedback_type ? ` (feedback type ${out.feedback_type})` : ''}`];
  if (out.recipients.length === 0) lines.push('  no failed recipient');
  for (const r of out.recipients) {
    const facts =
      out.kind === 'complaint'
        ? [`feedback report${out.feedback_type ? ` of type ${out.feedback_type}` : ''}, no SMTP reply`]
        : [`status ${r.status} ${FROM[r.status_from] ?? r.status_from}`, `reply code ${r.smtp_code ?? 'none'}`, `command ${r.command ?? 'not stated'}`];
    lines.push(`  ${r.address}: ${r.bounce_type} (${r.reason})`);
    lines.push(`    signals: ${facts.join(', ')}`);
    lines.push(`    words:   ${r.words.length > 0 ? r.words.join('; ') : 'none of the vocabularies'}`);
    lines.push(`    decided: ${r.decided_by.join('\n             then ')}`);
    if (r.diagnostic) lines.push(`    reply:   ${r.diagnostic.length > 200 ? `${r.diagnostic.slice(0, 197)}...` : r.diagnostic}`);
  }
  return lines.join('\n');
}
