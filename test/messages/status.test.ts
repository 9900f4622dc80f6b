import { describe, expect, it } from 'vitest';
import { RECIPIENT_STATUSES, messageStatusOf, statusChangesOnMove, type MessageStatus, type RecipientStatus } from '../../src/messages/status.ts';

/** Unfinished statuses, least advanced first: a held recipient ranks below every other. */
const UNFINISHED: RecipientStatus[] = ['held', 'scheduled', 'queued', 'deferred', 'sending'];

/** The rule of the public interface (SPEC §3), spelled out independently of the table that encodes it. */
function expected(statuses: RecipientStatus[]): MessageStatus {
  const unfinished = UNFINISHED.filter((s) => statuses.includes(s));
  if (unfinished.length > 0) return unfinished[unfinished.length - 1];
  const others = statuses.filter((s) => s !== 'suppressed');
  if (others.length === 0) return 'suppressed';
  const delivered = others.filter((s) => s === 'delivered').length;
  if (delivered === others.length) return 'delivered';
  if (delivered > 0) return 'partial';
  if (others.includes('bounced')) return 'bounced';
  if (others.every((s) => s === 'canceled')) return 'canceled';
  return 'failed';
}

/** Every set of recipient statuses, the empty one included. */
const ALL_SETS = RECIPIENT_STATUSES.reduce<RecipientStatus[][]>((out, s) => out.concat(out.map((set) => [...set, s])), [[]]);

describe('the message-status rule', () => {
  it('gives the interface’s status for every set of recipient statuses, whatever the counts', () => {
    expect(ALL_SETS).toHaveLength(1024);
    const wrong = ALL_SETS.flatMap((set) => {
      // Counts cannot matter: the same set with its first status twice.
      const got = [messageStatusOf(set), messageStatusOf([...set, ...set.slice(0, 1)])];
      return got.every((g) => g === expected(set)) ? [] : [`${set.join(',')} → ${got.join('/')}, expected ${expected(set)}`];
    });
    expect(wrong).toStrictEqual([]);
    expect(messageStatusOf([])).toBe('suppressed');
  });

  it('says what a claim does to a message: any unfinished status it can have becomes sending', () => {
    expect(statusChangesOnMove(['queued', 'deferred', 'sending'], 'sending')).toStrictEqual(
      new Map([
        ['queued', 'sending'],
        ['deferred', 'sending'],
      ]),
    );
  });

  it('says what releasing scheduled recipients does: only a scheduled message becomes queued', () => {
    expect(statusChangesOnMove(['scheduled'], 'queued')).toStrictEqual(new Map([['scheduled', 'queued']]));
  });

  it('ranks held below every other unfinished status: a held recipient is never claimed nor released by the scheduler', () => {
    expect(messageStatusOf(['held', 'scheduled'])).toBe('scheduled');
    expect(messageStatusOf(['held', 'delivered'])).toBe('held');
    // Holding is not decided by the status before (a queued message with a scheduled recipient
    // becomes scheduled): queue control re-derives its messages' statuses instead.
    expect(() => statusChangesOnMove(['queued', 'deferred'], 'held')).toThrow(/may become/);
  });

  it('refuses a move whose outcome the status before does not decide', () => {
    // A sending message whose recipient is delivered may stay sending, or be delivered or partial.
    expect(() => statusChangesOnMove(['sending'], 'delivered')).toThrow(/a sending message may become/);
  });
});
