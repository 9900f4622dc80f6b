import { invalid, notFound } from '../core/errors.ts';
import type { Clock } from '../core/ports.ts';
import type { Db } from '../store/db.ts';
import { eventsRepo } from '../store/events.ts';
import { messagesRepo, type MessageFilter, type MessageRow, type MessageWithContent } from '../store/messages.ts';
import { queueControlRepo } from '../store/queue-control.ts';
import type { Principal } from '../tenancy/principal.ts';
import { messageDetail } from './views.ts';

/** Reading and canceling messages, within what the caller's key may see. */
export class MessageQueries {
  constructor(private readonly deps: { db: Db; clock: Clock }) {}

  /** The message, if the caller's key may see it; otherwise the one 404. */
  async visible(principal: Principal, id: number): Promise<MessageWithContent> {
    const row = await messagesRepo.byId(this.deps.db, id);
    if (!row || row.workspace_id !== principal.workspaceId) throw notFound();
    if (principal.domain !== null && row.domain !== principal.domain) throw notFound();
    return row;
  }

  async detail(principal: Principal, id: number) {
    const row = await this.visible(principal, id);
    const recipients = await messagesRepo.recipients(this.deps.db, id);
    const events = await eventsRepo.payloadsOf(this.deps.db, id);
    return messageDetail(
      row,
      recipients,
      events.map((payload) => JSON.parse(payload)),
    );
  }

  list(principal: Principal, filter: Omit<MessageFilter, 'workspaceId' | 'domain'>): Promise<MessageRow[]> {
    return messagesRepo.list(this.deps.db, { ...filter, workspaceId: principal.workspaceId, domain: principal.domain });
  }

  /** A scheduled message becomes canceled; anything else is a 422 saying what it is. */
  async cancel(principal: Principal, id: number) {
    const row = await this.visible(principal, id);
    await this.deps.db.transaction(async (tx) => {
      const current = await messagesRepo.byId(tx, id);
      if (current!.status !== 'scheduled') {
        throw invalid(`Only a scheduled message can be canceled; this one is ${current!.status}`);
      }
      const canceled = await messagesRepo.setRecipientStatus(tx, id, 'scheduled', 'canceled', this.deps.clock.now());
      // Canceled mail is not billed (SPEC §11): the usage counted at acceptance is taken back.
      await queueControlRepo.unbill(tx, new Map([[id, canceled]]));
    });
    return this.detail(principal, row.id);
  }
}
