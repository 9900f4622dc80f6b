import { notHeldSql } from './queue-control.ts';

/**
 * Which due rows a claim takes (`queueRepo.claim`), as SQL for each database: the oldest due
 * first, none a standing hold covers, and with traffic shaping no row of an excluded group and
 * at most each group's cap.
 */

/** Statuses a claim may take; `sending` only once its lease has expired (due_at = lease end). */
export const CLAIMABLE = ['queued', 'deferred', 'sending'] as const;
const CLAIMABLE_SQL = CLAIMABLE.map((s) => `'${s}'`).join(', ');

export interface ClaimRequest {
  owner: string;
  now: number;
  leaseMs: number;
  limit: number;
  /**
   * Traffic shaping (SPEC §11): no row of a group in `exclude`, and of each group at most its
   * cap (`caps`, else `defaultCap`). A domain not yet in `delivery_domains` is a group of its own.
   */
  shape?: { exclude: string[]; caps: [group: string, cap: number][]; defaultCap: number };
}

export interface Sql {
  sql: string;
  bindings: unknown[];
}

/** A LIMIT as a parameter (PostgreSQL). */
const boundLimit = (n: number): Sql => ({ sql: 'limit ?', bindings: [n] });

/**
 * A LIMIT written as its number (SQLite). SQLite plans with a bound LIMIT's value and so compiles
 * the statement again each time the parameter is bound: the claim, run many times a second, was
 * compiled anew on every run. With the number in the text it is compiled once per distinct limit.
 */
function writtenLimit(n: number): Sql {
  if (!Number.isSafeInteger(n) || n < 0) throw new Error(`A claim's limit must be a whole number, not ${n}`);
  return { sql: `limit ${n}`, bindings: [] };
}

/** Rows a shaped claim looks at per row it may take: enough to find other groups behind a busy one. */
const CANDIDATES_PER_ROW = 4;

const GROUPED_COLUMNS = `r.id, r.due_at, coalesce(d.group_name, 'domain:' || r.domain) as grp`;
const GROUPED_FROM = 'recipients r left join delivery_domains d on d.domain = r.domain';

/** The ids a claim takes on SQLite, a subquery of its update (one writer: the statement is atomic). */
export function pickSqlite(req: ClaimRequest): Sql {
  const shape = req.shape;
  if (!shape) {
    const due = dueInOrder('r.id, r.due_at', 'recipients r', `r.due_at <= ? and ${notHeldSql('r')}`, [req.now], writtenLimit(req.limit));
    return { sql: `select id from (${due.sql}) as picked_due`, bindings: due.bindings };
  }
  const candidates = dueInOrder(
    GROUPED_COLUMNS,
    GROUPED_FROM,
    `r.due_at <= ? and coalesce(d.group_name, '') not in (select value from json_each(?)) and ${notHeldSql('r')}`,
    [req.now, JSON.stringify(shape.exclude)],
    writtenLimit(req.limit * CANDIDATES_PER_ROW),
  );
  return {
    sql: `with caps(grp, cap) as (
       select json_extract(value, '$[0]'), json_extract(value, '$[1]') from json_each(?)
     ), cand as (
       ${candidates.sql}
     ), ranked as (
       select cand.id, cand.due_at, row_number() over (partition by cand.grp order by cand.due_at, cand.id) as rn, coalesce(caps.cap, ?) as cap
       from cand left join caps on caps.grp = cand.grp
     )
     select id from ranked where rn <= cap order by due_at ${writtenLimit(req.limit).sql}`,
    bindings: [JSON.stringify(shape.caps), ...candidates.bindings, shape.defaultCap],
  };
}

/**
 * The `picked` clause (ids, locked) that the claim's one statement on PostgreSQL starts with.
 * Rows another worker holds are skipped (FOR UPDATE SKIP LOCKED). A shaped claim ranks more
 * candidates than it takes, then locks what it takes.
 */
export function pickPg(req: ClaimRequest): Sql {
  const shape = req.shape;
  if (!shape) {
    // Each walk locks as it goes, skipping what other workers hold: candidates locked only after
    // a merged list was cut could leave a claim short while due rows wait behind them.
    const due = dueInOrder('r.id, r.due_at', 'recipients r', `r.due_at <= ? and ${notHeldSql('r')}`, [req.now], boundLimit(req.limit), 'for update skip locked');
    return { sql: `with picked as (select id from (${due.sql}) as picked_due)`, bindings: due.bindings };
  }
  const candidates = dueInOrder(
    GROUPED_COLUMNS,
    GROUPED_FROM,
    `r.due_at <= ? and coalesce(d.group_name, '') <> all(?::text[]) and ${notHeldSql('r')}`,
    [req.now, shape.exclude],
    boundLimit(req.limit * CANDIDATES_PER_ROW),
  );
  return {
    sql: `with caps as (
            select * from unnest(?::text[], ?::int[]) as c(grp, cap)
          ), cand as (
            ${candidates.sql}
          ), ranked as (
            select cand.id, row_number() over (partition by cand.grp order by cand.due_at, cand.id) as rn, coalesce(caps.cap, ?) as cap
            from cand left join caps on caps.grp = cand.grp
          ), picked as (
            select id from recipients where id in (select id from ranked where rn <= cap) and status in (${CLAIMABLE_SQL}) and due_at <= ?
            order by due_at limit ? for update skip locked
          )`,
    bindings: [shape.caps.map(([g]) => g), shape.caps.map(([, c]) => c), ...candidates.bindings, shape.defaultCap, req.now, req.limit],
  };
}

/**
 * At most `limit` rows of `from` (whose recipients are `r`) that are due and pass `where`,
 * oldest due first: one walk of the (status, due_at) index per claimable status, each stopping
 * at `limit` rows, merged. Written as `status in (...) order by due_at`, both databases read
 * every due row and sort them, so each claim behind a backlog of 100,000 due rows read all of
 * them. `columns` must include `r.due_at`; `lock` (PostgreSQL) locks each walk's rows as it takes
 * them, up to `limit` per walk.
 */
function dueInOrder(columns: string, from: string, where: string, bindings: unknown[], limit: Sql, lock = ''): Sql {
  const branches = CLAIMABLE.map(
    (status, i) => `select * from (select ${columns} from ${from} where r.status = '${status}' and ${where} order by r.due_at ${limit.sql} ${lock}) as due_${i}`,
  );
  return {
    sql: `select * from (${branches.join(' union all ')}) as due order by due_at ${limit.sql}`,
    bindings: [...CLAIMABLE.flatMap(() => [...bindings, ...limit.bindings]), ...limit.bindings],
  };
}
