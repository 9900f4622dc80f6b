import { invalid } from '../core/errors.ts';
import { isProblem, parseMailbox } from '../messages/address.ts';
import type { Stream, SuppressionReason } from '../store/suppressions.ts';

export const STREAMS: Stream[] = ['transactional', 'broadcast'];
export const REASONS: SuppressionReason[] = ['bounce', 'complaint', 'unsubscribe', 'manual'];

export function checkStream(stream: string): Stream {
  if (!(STREAMS as string[]).includes(stream)) throw invalid('Field `stream` must be `transactional` or `broadcast`');
  return stream as Stream;
}

/** A bare address, lowercased: suppression matches case-insensitively. */
export function checkAddress(address: string): string {
  const parsed = parseMailbox(address);
  if (isProblem(parsed) || parsed.name !== null) throw invalid(`Field \`address\` is not a valid address: "${address.slice(0, 200)}"`);
  return parsed.address.toLowerCase();
}
