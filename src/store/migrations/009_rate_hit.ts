import type { Knex } from 'knex';

/**
 * PostgreSQL: one request's rate-limit check and count as one function, so the key's lock is
 * held for microseconds inside the server instead of across round trips. Under READ COMMITTED
 * each statement of a volatile function reads with a snapshot taken when it starts, so the
 * sums below, taken after the lock, see every count committed before it. A request is refused
 * when any window already holds its limit (the rule of `decide`, src/ratelimit/sliding.ts); it
 * returns whether it counted and the key's buckets of the last hour as they were before.
 * A bucket later than this request's second counts too: another process's clock read may be a
 * moment ahead of ours while its request took the lock first.
 */
export async function up(knex: Knex): Promise<void> {
  if (knex.client.config.client !== 'pg') return;
  await knex.raw(`
    create or replace function mailsvc_rate_hit(p_key integer, p_second bigint, p_windows integer[], p_limits integer[])
    returns table (allowed boolean, buckets jsonb)
    language plpgsql volatile as $$
    declare
      v_buckets jsonb;
      v_allowed boolean := true;
      i integer;
    begin
      -- Called on its own, so this is its transaction's commit: it need not wait for the disk
      -- (a crash may forget a second's counts, never mail).
      perform set_config('synchronous_commit', 'off', true);
      perform pg_advisory_xact_lock(7426002, p_key);
      select coalesce(jsonb_agg(jsonb_build_array(second, count) order by second), '[]'::jsonb) into v_buckets
        from rate_limit_buckets where key_id = p_key and second > p_second - 3600;
      for i in 1 .. coalesce(array_length(p_windows, 1), 0) loop
        if (select coalesce(sum(count), 0) from rate_limit_buckets
              where key_id = p_key and second > p_second - p_windows[i]) >= p_limits[i] then
          v_allowed := false;
        end if;
      end loop;
      if v_allowed then
        insert into rate_limit_buckets (key_id, second, count) values (p_key, p_second, 1)
          on conflict (key_id, second) do update set count = rate_limit_buckets.count + 1;
      end if;
      return query select v_allowed, v_buckets;
    end $$;
  `);
}

export async function down(knex: Knex): Promise<void> {
  if (knex.client.config.client !== 'pg') return;
  await knex.raw('drop function if exists mailsvc_rate_hit(integer, bigint, integer[], integer[])');
}
