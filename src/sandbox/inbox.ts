import { ServiceError } from '../core/errors.ts';
import { iso } from '../core/time.ts';
import type { Scope } from '../domains/service.ts';
import type { Db } from '../store/db.ts';
import { sandboxRepo, type SandboxMessageRow, type SandboxSummaryRow } from '../store/sandbox.ts';

export function captureSummary(row: SandboxSummaryRow) {
  return {
    id: row.id,
    email_id: row.email_id,
    recipient: row.rcpt_to,
    envelope: { mail_from: row.mail_from, rcpt_to: row.rcpt_to },
    message_id: row.message_id,
    subject: row.subject,
    outcome: row.outcome,
    response: row.response,
    dkim: { result: row.dkim_result, detail: row.dkim_detail },
    size: row.size,
    captured_at: iso(row.captured_at),
  };
}

export function captureDetail(row: SandboxMessageRow) {
  return { ...captureSummary(row), raw: Buffer.from(row.raw).toString('utf8') };
}

const filterOf = (scope: Scope) => (scope ? { workspaceId: scope.workspaceId, domain: scope.domain ?? null } : {});

/** The sandbox inbox as the API and the CLI read it: newest first, within the caller's scope. */
export class SandboxInbox {
  constructor(private readonly deps: { db: Db }) {}

  list(scope: Scope, page: { limit: number; beforeId?: number; emailId?: number }): Promise<SandboxSummaryRow[]> {
    return sandboxRepo.list(this.deps.db, { ...filterOf(scope), ...page });
  }

  async get(scope: Scope, id: number): Promise<SandboxMessageRow> {
    const row = await sandboxRepo.byId(this.deps.db, id, filterOf(scope));
    if (!row) throw new ServiceError('NOT_FOUND', `Not found: no sandbox message ${id}`);
    return row;
  }
}
