/** What a destination group may take: the limits of SPEC §11. */
export interface ShapingLimits {
  /** Concurrent connections (per process). */
  connections: number;
  /** Messages per minute across every process; null: unlimited. */
  perMinute: number | null;
  /** Messages sent on one connection before it is closed. */
  perConnection: number;
}

/** A provider: the MX host name suffixes that name its group `provider:<name>`, and its limits. */
export interface ProviderRule {
  name: string;
  /** Suffixes of MX host names, matched on label boundaries (`google.com` matches `aspmx.l.google.com`). */
  mx: string[];
  connections?: number;
  perMinute?: number | null;
  perConnection?: number;
}

/** A built-in provider rule, with where its numbers come from. */
export interface BuiltInProvider extends ProviderRule {
  /** The public source of the limits (a URL, and what it says), for docs/SHAPING.md. */
  source: string;
}

export type ShapingAction = 'suspend' | 'throttle' | 'reconnect-later' | 'pause-address';

/**
 * What to do when a reply matches: `match` is a substring (case-insensitive) or `/regex/flags`,
 * tried against the whole reply line ("421 4.7.28 ... text").
 */
export interface ReplyRule {
  match: string;
  action: ShapingAction;
  seconds: number;
}

/** A built-in reply rule, with the provider it is for and the public source of its wording. */
export interface BuiltInReplyRule extends ReplyRule {
  provider: string;
  source: string;
}
