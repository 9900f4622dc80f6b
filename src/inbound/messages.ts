import { notFound } from '../core/errors.ts';
import type { Logger } from '../core/ports.ts';
import type { Db } from '../store/db.ts';
import { inboundMessagesRepo, type InboundMessageSummary } from '../store/inboundMessages.ts';
import { startParsePool, type ReportParser } from './parse-pool.ts';
import { ReportBytes } from './receive.ts';
import type { ReceivedView } from './received-payload.ts';

/** An attachment served by URL: its bytes and how to label them. */
export interface AttachmentFile {
  filename: string | null;
  content_type: string;
  content: Buffer;
}

export const inboundSummaryView = (row: InboundMessageSummary) => {
  const parsed = JSON.parse(row.parsed) as Partial<ReceivedView>;
  return {
    id: row.id,
    received_at: new Date(Number(row.received_at)).toISOString(),
    envelope: { from: row.mail_from, to: JSON.parse(row.recipients) as string[] },
    from: parsed.from ?? null,
    subject: parsed.subject ?? null,
    size: row.size,
    remote_ip: row.remote_ip,
  };
};

// Attachments are read again from the raw bytes when asked for, in a worker of their own.
const ATTACHMENT_PARSE = { workers: 1, budgetMs: 10_000, maxQueued: 20 };

/** Received messages as the API serves them (SPEC §14): list, parsed view, raw bytes, attachments. */
export class InboundMessages {
  private parser: Promise<ReportParser> | null = null;

  constructor(private readonly deps: { db: Db; log: Logger }) {}

  private async summary(workspaceId: number, id: number): Promise<InboundMessageSummary> {
    const row = await inboundMessagesRepo.summary(this.deps.db, id);
    if (!row || row.workspace_id !== workspaceId) throw notFound();
    return row;
  }

  list(workspaceId: number, opts: { beforeId?: number; limit: number }): Promise<InboundMessageSummary[]> {
    return inboundMessagesRepo.list(this.deps.db, workspaceId, opts);
  }

  async view(workspaceId: number, id: number): Promise<ReceivedView> {
    return JSON.parse((await this.summary(workspaceId, id)).parsed) as ReceivedView;
  }

  async rawBytes(workspaceId: number, id: number): Promise<Buffer> {
    await this.summary(workspaceId, id);
    return (await inboundMessagesRepo.rawBytes(this.deps.db, id))!;
  }

  /** The n-th attachment (from 0), parsed again from the stored bytes off the event loop. */
  async attachment(workspaceId: number, id: number, n: number): Promise<AttachmentFile> {
    const raw = await this.rawBytes(workspaceId, id);
    this.parser ??= startParsePool(ATTACHMENT_PARSE, this.deps.log);
    const outcome = await (await this.parser).parseMail(ReportBytes.of(raw));
    const a = outcome.parsed?.attachments[n];
    if (!a) throw notFound();
    return { filename: a.filename, content_type: a.content_type, content: Buffer.from(a.content.buffer, a.content.byteOffset, a.content.byteLength) };
  }

  async close(): Promise<void> {
    if (this.parser) await (await this.parser).close();
  }
}
