// A scratch PostgreSQL database for one bench run, created from MAILSVC_BENCH_PG_URL's server
// and dropped afterwards.

import { randomBytes } from 'node:crypto';
import pg from 'pg';

async function admin(baseUrl: string, sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: baseUrl });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

export interface PgScratch {
  url: string;
  drop(): Promise<void>;
}

/** A new, empty database on the server `baseUrl` names; `prefix` makes its name recognisable. */
export async function pgScratch(baseUrl: string, prefix = 'mailsvc_bench'): Promise<PgScratch> {
  const name = `${prefix}_${randomBytes(4).toString('hex')}`;
  await admin(baseUrl, `CREATE DATABASE ${name}`);
  const url = new URL(baseUrl);
  url.pathname = `/${name}`;
  return { url: url.toString(), drop: () => admin(baseUrl, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`) };
}
