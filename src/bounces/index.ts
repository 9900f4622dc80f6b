// The bounces capability: one classifier for SMTP replies and one parser for inbound reports
// (DSN, ARF, auto-replies and the free-text notices of ~70 MTAs). Pure code: no I/O.

export type { BounceType, ReplyClassification, ReportKind, ReportRecipient, ParsedReport } from './types.ts';
export { classifyReply } from './classify.ts';
export { emptyReport, parseReport, parseReportSync } from './report.ts';
export { toParseOutput, type ParseOutput } from './output.ts';
export { formatExplanation, toExplainOutput, type ExplainOutput } from './explain.ts';
export { REASONS, type Reason } from './rules.ts';
export { domainWarning, senderSideWarning, type SenderSideWarning } from './sender-side.ts';
