// Public shapes of the bounces capability (SPEC §5).

export type BounceType = 'permanent' | 'transient' | 'blocked';

export interface ReplyClassification {
  bounceType: BounceType;
  /** Short snake_case word; the full list with meanings is REASONS in rules.ts. */
  reason: string;
  /** Enhanced status code (RFC 3463); derived as "X.0.0" from the reply class when absent. */
  status: string;
}

export interface ReplyInput {
  smtpCode?: number | null;
  status?: string | null;
  text?: string | null;
}

export type ReportKind = 'bounce' | 'complaint' | 'autoreply' | 'unknown';

export interface ReportRecipient {
  address: string;
  action: string;
  status: string;
  smtpCode: number | null;
  bounceType: BounceType;
  reason: string;
  diagnostic: string;
  remoteMta: string | null;
}

export interface ParsedReport {
  kind: ReportKind;
  recipients: ReportRecipient[];
  feedbackType: string | null;
  originalMessageId: string | null;
  reportingMta: string | null;
  humanText: string;
  userAgent: string | null;
  sourceIp: string | null;
}
