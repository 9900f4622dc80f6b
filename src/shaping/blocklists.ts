/**
 * Replies that say the sending address itself is on a blocklist (a DNSBL, or the receiver's own
 * list of bad IPs): they are about us, not the recipient, so the address goes out of its pools
 * for a while and the recipient tries another. Read on the first 512 characters, like the reply
 * rules; the pattern has no nested quantifier.
 */
const BLOCKLIST =
  /\b(?:spamhaus|barracuda(?:central)?|spamcop|sorbs|uceprotect|block ?list(?:ed)?|black ?list(?:ed)?|dnsbl|rbl|listed (?:at|in|on|by) (?:[a-z0-9-]+\.)+[a-z]{2,})\b/i;

export function isBlocklistReply(reply: string): boolean {
  return BLOCKLIST.test(reply.slice(0, 512));
}
