/**
 * End to end over SMTP: smtp-source -> mailsvc submission -> delivery through MX records on a
 * loopback DNS server -> smtp-sink, DKIM-signing every message; in the same run the same load
 * through a throwaway Postfix relaying to a sink, and through Postfix with Debian's OpenDKIM
 * milter signing. Delivered messages per second, from the first connection to the last message
 * at the sink; the sink must count exactly the messages sent. Installs postfix, opendkim and
 * opendkim-tools when missing (apt-get).
 *
 *   npm run bench -- relay [messages=20000] [sessions=20] [bytes=5120] [runs=3]
 */
import { relayBench } from './lib/relay.ts';

const [total, sessions, bytes, runs] = process.argv.slice(2).map(Number);
await relayBench({ mode: 'smtp', total: total || 20_000, sessions: sessions || 20, bytes: bytes || 5120, runs: runs || 3 });
