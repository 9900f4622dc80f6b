/**
 * End to end over HTTP: POST /api/v1/emails (autocannon, one request per message) -> delivery
 * through MX records on a loopback DNS server -> smtp-sink, DKIM-signing every message, from the
 * first request to the last message at the sink; in the same run the same number of messages
 * through Postfix (smtp-source) and through Postfix with OpenDKIM, as in `relay`.
 *
 *   npm run bench -- http-to-sink [messages=20000] [connections=20] [bytes=5120] [runs=3]
 */
import { relayBench } from './lib/relay.ts';

const [total, sessions, bytes, runs] = process.argv.slice(2).map(Number);
await relayBench({ mode: 'http', total: total || 20_000, sessions: sessions || 20, bytes: bytes || 5120, runs: runs || 3 });
