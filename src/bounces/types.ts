// Public shapes of the bounces capability.

import type { Explanation } from './classify.ts';

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
  /** A DSN's Original-Recipient when it names another address (forwarding, aliases); else null. */
  originalRecipient: string | null;
  action: string;
  status: string;
  smtpCode: number | null;
  bounceType: BounceType;
  reason: string;
  diagnostic: string;
  /**
   * The report's own text for this recipient, unmodified (stored as the event's
   * `provider.response`): the Diagnostic-Code after its type, else the recipient's paragraph.
   */
  response: string;
  remoteMta: string | null;
  /** What the classifier saw and which rule decided (`mailsvc bounce explain`); absent for complaints. */
  explanation?: Explanation;
}

export interface ParsedReport {
  kind: ReportKind;
  recipients: ReportRecipient[];
  feedbackType: string | null;
  originalMessageId: string | null;
  /** The Return-Path of the quoted original: our VERP sender when a complaint quotes our mail. */
  originalReturnPath: string | null;
  reportingMta: string | null;
  humanText: string;
  userAgent: string | null;
  sourceIp: string | null;
}
