// Amazon SES bounce and complaint notifications delivered by e-mail through SNS: the body is
// JSON, either the SES event itself ({"notificationType":"Bounce","bounce":{...}}) or the SNS
// envelope around it ({"Type":"Notification","Message":"{\"notificationType\":...}"}).

export interface SesRecipient {
  address: string;
  action: string | null;
  status: string | null;
  diagnostic: string;
}

export interface SesEvent {
  type: 'bounce' | 'complaint' | 'delivery';
  bounceType: string | null; // "Permanent" | "Transient" | "Undetermined"
  feedbackType: string | null;
  reportingMta: string | null;
  recipients: SesRecipient[];
}

/** The first balanced {...} in the text (the notification is followed by an SNS footer). */
function firstObject(text: string): string | null {
  const start = text.indexOf('{');
  if (start < 0) return null;
  let depth = 0;
  let inString = false;
  for (let i = start; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === '\\') i++;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === '{') depth++;
    else if (c === '}' && --depth === 0) return text.slice(start, i + 1);
  }
  return null;
}

type Json = Record<string, unknown>;
const str = (v: unknown): string | null => (typeof v === 'string' ? v : null);

export function parseSesNotification(text: string): SesEvent | null {
  if (!/notificationType|eventType/.test(text)) return null;
  // Mail relays split lines longer than 990 octets with "!\n " (Sendmail's historic
  // behaviour); SNS notifications are one long line, so join them back before parsing.
  const raw = firstObject(text.replace(/!\n /g, ''));
  if (!raw) return null;
  let obj: Json;
  try {
    obj = JSON.parse(raw) as Json;
    if (obj.Type === 'Notification' && typeof obj.Message === 'string') obj = JSON.parse(obj.Message) as Json;
  } catch {
    return null;
  }
  const kind = [obj.notificationType, obj.eventType].find((v): v is string => typeof v === 'string')?.toLowerCase() ?? '';
  if (kind === 'bounce') {
    const b = (obj.bounce ?? {}) as Json;
    const list = Array.isArray(b.bouncedRecipients) ? (b.bouncedRecipients as Json[]) : [];
    return {
      type: 'bounce',
      bounceType: str(b.bounceType),
      feedbackType: null,
      reportingMta: str(b.reportingMTA)?.replace(/^dns;\s*/i, '') ?? null,
      recipients: list.map((r) => ({
        address: str(r.emailAddress) ?? '',
        action: str(r.action),
        status: str(r.status),
        diagnostic: str(r.diagnosticCode) ?? '',
      })),
    };
  }
  if (kind === 'complaint') {
    const c = (obj.complaint ?? {}) as Json;
    const list = Array.isArray(c.complainedRecipients) ? (c.complainedRecipients as Json[]) : [];
    return {
      type: 'complaint',
      bounceType: null,
      feedbackType: (str(c.complaintFeedbackType) ?? 'abuse').toLowerCase(),
      reportingMta: null,
      recipients: list.map((r) => ({ address: str(r.emailAddress) ?? '', action: null, status: null, diagnostic: '' })),
    };
  }
  if (kind === 'delivery') return { type: 'delivery', bounceType: null, feedbackType: null, reportingMta: null, recipients: [] };
  return null;
}
