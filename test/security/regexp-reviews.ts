// Patterns recheck could not decide in its time (or whose fuzzer reports a blow-up that V8 does
// not show), each read by hand: why it is linear. Keyed by the pattern's source, so an edited
// pattern loses its review and is checked again. Keep this list short: prefer rewriting a
// pattern until recheck calls it safe.

// A whitespace-free token (`\S+`, `\S*`) between literal words: the engine reaches the token only
// where the literal before it matches, reads at most to the next space, and no other start
// position can read the same token again, since each start must first match that literal.
const TOKEN_BETWEEN_WORDS = 'one whitespace-free token between literal words: each token is read from one start at most';

// An e-mail address inside a notice line (at most 998 characters): local part without '@',
// domain as dot-separated labels, so where the address ends is never in doubt; the line is
// anchored or the address follows a literal keyword.
const ADDRESS_IN_LINE = 'address with an @-free local part and dot-separated domain labels: one way to split it';

export const REVIEWED: Record<string, string> = {
  [String.raw`(?:deliver(?:ing|ed)?|sen[dt]|message|mail|e-?mail) (?:\S+ ){0,4}to:?\s+<?((?:"[^"]+"|[^\s<>()"',;:@]+)@[A-Za-z0-9\-\[\]:]*[A-Za-z0-9\]](?:\.[A-Za-z0-9\-\[\]:]*[A-Za-z0-9\]])*)>?[.:,]?\s*(?:\(|$|was|is|has|could|failed|because|\.)`]: `${ADDRESS_IN_LINE}; at most four tokens after a keyword, each read once`,
  [String.raw`^\s{0,8}<?((?:"[^"]+"|[^\s<>()"',;:@]+)@[A-Za-z0-9\-\[\]:]*[A-Za-z0-9\]](?:\.[A-Za-z0-9\-\[\]:]*[A-Za-z0-9\]])*)>?\s*(?:\(generated from|\(expanded from|<[^>]+>:|:\s+\S)`]: `${ADDRESS_IN_LINE}; anchored at the line start`,
  // A plain string: String.raw would keep the backslash before each backtick.
  ["(?<![A-Za-z0-9!#$%&'*+/=?^_`{|}~.-])[A-Za-z0-9!#$%&'*+/=?^_`{|}~.-]+@(?:[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)+|\\[[0-9A-Fa-f:.]+\\])"]:
    'the look-behind refuses a start inside a run of local-part characters, so each run is read from its first character only; domain labels are dot-separated',
  [String.raw`(?:host|domain)(?: name)? (?:\S+ )?not found`]: TOKEN_BETWEEN_WORDS,
  [String.raw`(?:ip|host|address) (?:address )?(?:\S+ )?(?:is |has been )?(?:listed|blocked|banned|blacklisted)`]: TOKEN_BETWEEN_WORDS,
  [String.raw`(?:missing|invalid) (?:\S+ )?header|header (?:is )?(?:missing|invalid|malformed)|header error`]: TOKEN_BETWEEN_WORDS,
  [String.raw`(?:user|mailbox|recipient|address|account|addressee) (?:\S+ )?(?:does not|doesn't|did not|not) exists?`]: TOKEN_BETWEEN_WORDS,
  [String.raw`(?:user|recipient) (?:\S+ )?(?:is )?(?:suspended|inactive|disabled|temporar(?:y|ily) locked)`]: TOKEN_BETWEEN_WORDS,
  [String.raw`(?<!not )listed (?:in|on|at|by) (?:the )?\S*(?:bl|black|block|spam)`]: TOKEN_BETWEEN_WORDS,
  [String.raw`after initial connection|greeting|my name was rejected|connected to \S+ but (?:greeting|connection) failed`]: TOKEN_BETWEEN_WORDS,
  [String.raw`client host (?:\[\S+\] )?(?:rejected|blocked)`]: TOKEN_BETWEEN_WORDS,
  [String.raw`limit (?:exceeded|reached) (?:for|on)|exceeded (?:the )?(?:\S+ )?(?:connection|message|sending|recipient) limit`]: TOKEN_BETWEEN_WORDS,
  [String.raw`multiple (?:\S+ )?addresses in from`]: TOKEN_BETWEEN_WORDS,
  [String.raw`this user doesn't have an? \S+ account`]: TOKEN_BETWEEN_WORDS,
  [String.raw`doesn't have an? \S+ account`]: TOKEN_BETWEEN_WORDS,
  [String.raw`command (?:died|failed)|pipe to \S+ failed|exit (?:code|status) \d+`]: TOKEN_BETWEEN_WORDS,
  [String.raw`sender (?:address |domain )?(?:\S+ )?(?:rejected|denied|refused|blocked|invalid|not allowed|verify failed|unknown|is not allowed)`]: TOKEN_BETWEEN_WORDS,
};
