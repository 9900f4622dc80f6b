import type { Knex } from 'knex';

/**
 * PostgreSQL: the rate-limit hits of many requests in one call, so a process sends one
 * statement for the requests that arrived while its previous call was in flight instead of one
 * round trip and one transaction each. Each group is `count` requests of one key in one second
 * under the same limits; groups come sorted by key and second, so two processes calling at once
 * take the keys' locks in the same order and cannot deadlock. The lock is the one
 * `mailsvc_rate_hit` (migration 009) takes, so nodes of either version stay exact together.
 * The rule is that of `decide` (src/ratelimit/sliding.ts) applied request by request: the first
 * requests of a group are allowed while every window has room, the rest refused; a refused
 * request counts for nothing. Returns, per group, how many were allowed and the key's buckets
 * of the last hour as they were before the group.
 */
export async function up(knex: Knex): Promise<void> {
  if (knex.client.config.client !== 'pg') return;
  await knex.raw(`
    create or replace function mailsvc_rate_hits(p_keys integer[], p_seconds bigint[], p_counts integer[], p_windows integer[], p_limits integer[])
    returns table (allowed integer, buckets jsonb)
    language plpgsql volatile as $$
    declare
      nw integer := coalesce(array_length(p_windows, 1), 0);
      g integer;
      j integer;
      v_used bigint;
    begin
      -- Called on its own, so this is its transaction's commit: it need not wait for the disk
      -- (a crash may forget a second's counts, never mail).
      perform set_config('synchronous_commit', 'off', true);
      for g in 1 .. coalesce(array_length(p_keys, 1), 0) loop
        perform pg_advisory_xact_lock(7426002, p_keys[g]);
        -- A statement after the lock: its snapshot sees every count committed before it.
        select coalesce(jsonb_agg(jsonb_build_array(second, count) order by second), '[]'::jsonb) into buckets
          from rate_limit_buckets where key_id = p_keys[g] and second > p_seconds[g] - 3600;
        allowed := p_counts[g];
        for j in 1 .. nw loop
          select coalesce(sum(count), 0) into v_used from rate_limit_buckets
            where key_id = p_keys[g] and second > p_seconds[g] - p_windows[j];
          allowed := least(allowed, greatest(0, p_limits[(g - 1) * nw + j] - v_used));
        end loop;
        if allowed > 0 then
          insert into rate_limit_buckets (key_id, second, count) values (p_keys[g], p_seconds[g], allowed)
            on conflict (key_id, second) do update set count = rate_limit_buckets.count + excluded.count;
        end if;
        return next;
      end loop;
    end $$;
  `);
}

export async function down(knex: Knex): Promise<void> {
  if (knex.client.config.client !== 'pg') return;
  await knex.raw('drop function if exists mailsvc_rate_hits(integer[], bigint[], integer[], integer[], integer[])');
}
