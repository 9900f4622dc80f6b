// Marks of a failure notice, as opposed to an auto-reply or ordinary mail. Notices come from a
// null sender, from MAILER-DAEMON or postmaster, under a subject like these:
//   "Undelivered Mail Returned to Sender" (Postfix), "failure notice" (qmail),
//   "Mail delivery failed: returning message to sender" (Exim), "Returned mail: see transcript
//   for details" (Sendmail), "Delivery Status Notification (Failure)" (Gmail),
//   "Undeliverable: ..." (Exchange), "DELIVERY FAILURE: ..." (Notes), "Nondeliverable mail".

import { decodeWords, header, type Header } from './mime.ts';

const NOTICE_SUBJECT =
  /undeliver|undelivered|non-?deliver|delivery (?:status|fail|failure|notification|report|problem)|returned mail|failure notice|mail delivery (?:failed|failure|system|subsystem)|could not be delivered|bounce|delivery failed|failed delivery|returning message|mail system error|warning: could not send|message not delivered|delayed mail|delivery delayed|unable to deliver|not delivered|error sending|rejected|mail failure|loop alert|fehlgeschlagen|unzustellbar|non remis|no entregado|配信|不達|エラー|返送/i;

const NOTICE_FROM = /mailer-daemon|post_?master|mail delivery|mail-daemon|maildelivery|delivery subsystem|mail administrator|mdaemon|bounce|mail system/i;

const NOTICE_TEXT =
  /could not be delivered|couldn't be delivered|was not delivered|wasn't able to deliver|unable to deliver|delivery (?:has )?failed|failed permanently|permanent (?:error|failure)|undeliverable|did not reach|delivery to the following recipient|the following address(?:es)? (?:failed|had)|following recipients?|error delivering|could not deliver|message you sent|returned to (?:you|sender)|has been delayed|not yet been delivered|remote host said|user unknown|mailbox|no such user|transcript of session|duplicated message-id/i;

export function looksLikeFailureNotice(top: Header[], text: string): boolean {
  if (header(top, 'x-failed-recipients')) return true;
  const subject = decodeWords(header(top, 'subject') ?? '');
  const from = header(top, 'from') ?? '';
  const nullSender = /^<\s*>$/.test((header(top, 'return-path') ?? '').trim());
  const score = (NOTICE_SUBJECT.test(subject) ? 1 : 0) + (NOTICE_FROM.test(from) ? 1 : 0) + (nullSender ? 1 : 0) + (NOTICE_TEXT.test(text.slice(0, 4000)) ? 1 : 0);
  return score >= 2;
}

// Delay warnings: "Warning: message ... delayed 4 hours" (Sendmail), "Delivery Status Notification
// (Delay)" (Gmail), "This is a warning message only... will retry" (Exim).
const DELAY =
  /\bdelayed\b|delay notification|\(delay\)|warning: (?:could not send|message)|still (?:being )?(?:retried|undelivered|trying)|will (?:continue|keep) (?:trying|retrying)|will be retried|will retry|not yet been delivered|temporar(?:y|ily) (?:failed|unable)/i;

export function noticeAction(top: Header[], text: string): 'failed' | 'delayed' {
  const subject = decodeWords(header(top, 'subject') ?? '');
  if (/delay|warning/i.test(subject) && DELAY.test(`${subject}\n${text.slice(0, 2000)}`)) return 'delayed';
  return 'failed';
}
