import type { Logger } from '../core/ports.ts';
import type { Db } from '../store/db.ts';
import type { GroupCommitter } from '../store/groupCommit.ts';
import { subjectIndex } from '../store/subject-index.ts';

/**
 * Indexes the subjects of newly stored messages for search every `intervalMs`, as a job of the
 * next shared commit (SQLite; on PostgreSQL its own trigram index needs nothing, and nothing is
 * ever pending). A subject search indexes what is still waiting before it reads
 * (`subjectIndex.catchUp`), so the interval decides only how large the batches are, never what
 * a search finds.
 */
export function startSubjectIndexing(deps: { db: Db; committer: GroupCommitter; log: Logger }, intervalMs = 1_000): { stop(): Promise<void> } {
  let running: Promise<void> | null = null;
  const run = async () => {
    while (await subjectIndex.pending(deps.db)) {
      const indexed = await deps.committer.run((tx) => subjectIndex.indexPending(tx));
      if (indexed === 0) return;
    }
  };
  const timer = setInterval(() => {
    if (running) return;
    running = run()
      .catch((err: unknown) => deps.log.warn({ phase: 'search', err }, 'indexing subjects for search failed; will retry'))
      .finally(() => (running = null));
  }, intervalMs);
  timer.unref();
  return {
    stop: async () => {
      clearInterval(timer);
      await running;
    },
  };
}
