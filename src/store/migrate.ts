import type { Knex } from 'knex';
import { isPg, type Db } from './db.ts';
import * as platform from './migrations/001_platform.ts';
import * as messages from './migrations/002_messages.ts';
import * as delivery from './migrations/003_delivery.ts';
import * as inbound from './migrations/004_inbound.ts';
import * as reportBounds from './migrations/005_report_bounds.ts';
import * as sandbox from './migrations/006_sandbox.ts';
import * as seams from './migrations/007_seams.ts';
import * as webhooks from './migrations/008_webhooks.ts';
import * as rateHit from './migrations/009_rate_hit.ts';
import * as rateHitBatch from './migrations/010_rate_hit_batch.ts';
import * as usageSlots from './migrations/011_usage_slots.ts';
import * as messageContents from './migrations/012_message_contents.ts';
import * as suppressionKeyset from './migrations/013_suppression_keyset.ts';
import * as shaping from './migrations/014_shaping.ts';
import * as queueHolds from './migrations/015_queue_holds.ts';
import * as pools from './migrations/016_pools.ts';
import * as sendingAddresses from './migrations/017_sending_addresses.ts';
import * as inboundRoutes from './migrations/018_inbound_routes.ts';
import * as messageSearch from './migrations/019_message_search.ts';
import * as templates from './migrations/020_templates.ts';
import * as dkimKeys from './migrations/021_dkim_keys.ts';
import * as recipientTls from './migrations/022_recipient_tls.ts';
import * as reputation from './migrations/023_reputation.ts';
import * as messageRaw from './migrations/024_message_raw.ts';
import * as subjectIndexBatches from './migrations/025_subject_index_batches.ts';

type Migration = { up(knex: Knex): Promise<void>; down(knex: Knex): Promise<void>; config?: { transaction?: boolean } };

/** Migrations are imported, not globbed from disk, so they run the same under tsx and in tests. */
const MIGRATIONS: Record<string, Migration> = {
  '001_platform': platform,
  '002_messages': messages,
  '003_delivery': delivery,
  '004_inbound': inbound,
  '005_report_bounds': reportBounds,
  '006_sandbox': sandbox,
  '007_seams': seams,
  '008_webhooks': webhooks,
  '009_rate_hit': rateHit,
  '010_rate_hit_batch': rateHitBatch,
  '011_usage_slots': usageSlots,
  '012_message_contents': messageContents,
  '013_suppression_keyset': suppressionKeyset,
  '014_shaping': shaping,
  '015_queue_holds': queueHolds,
  '016_pools': pools,
  '017_sending_addresses': sendingAddresses,
  '018_inbound_routes': inboundRoutes,
  '019_message_search': messageSearch,
  '020_templates': templates,
  '021_dkim_keys': dkimKeys,
  '022_recipient_tls': recipientTls,
  '023_reputation': reputation,
  '024_message_raw': messageRaw,
  '025_subject_index_batches': subjectIndexBatches,
};

/** The migrations in order, for knex's migrator (`migrate.up`, `.down` in tests). */
export const source: Knex.MigrationSource<string> = {
  getMigrations: async () => Object.keys(MIGRATIONS).sort(),
  getMigrationName: (name) => name,
  getMigration: async (name) => MIGRATIONS[name],
};

/** Any fixed number: the advisory lock that serialises nodes migrating one PostgreSQL database. */
const MIGRATION_LOCK = 7_426_001;

/**
 * Applies pending migrations; returns the names applied. Knex's own lock makes a second
 * migrator fail rather than wait, so on PostgreSQL nodes starting together first queue on an
 * advisory lock (held by a transaction on one pooled connection while the migrations run on
 * another); the ones after the first find nothing pending.
 */
export async function migrate(db: Db): Promise<string[]> {
  const latest = async () => ((await db.migrate.latest({ migrationSource: source })) as [number, string[]])[1];
  if (!isPg(db)) return latest();
  return db.transaction(async (tx) => {
    await tx.raw('select pg_advisory_xact_lock(?)', [MIGRATION_LOCK]);
    return latest();
  });
}

/** Names of the migrations not applied yet, without applying them. */
export async function pendingMigrations(db: Db): Promise<string[]> {
  const [, pending] = (await db.migrate.list({ migrationSource: source })) as [unknown[], unknown[]];
  return pending.map((m) => (typeof m === 'string' ? m : String((m as { name?: string; file?: string }).name ?? (m as { file?: string }).file)));
}
