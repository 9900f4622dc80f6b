import { defineConfig } from 'vitest/config';

// Tests that assert a latency or a wall-clock bound run on their own, one file at a time, after
// the rest: a neighbour's CPU work must not decide whether they pass. Everything else spends most
// of its time waiting on sockets and child processes, so two files run side by side.
const TIMED = [
  'test/api/fuzz.test.ts',
  'test/bounces/linear.test.ts',
  'test/cli/reach.test.ts',
  'test/console/messages.test.ts',
  'test/delivery/crash.test.ts',
  'test/delivery/smtp-transport.test.ts',
  'test/inbound/fuzz.test.ts',
  'test/inbound/responsive.test.ts',
  'test/messages/address.test.ts',
  'test/messages/durability.test.ts',
  'test/messages/validate.test.ts',
  'test/sandbox/*.test.ts',
  'test/shaping/actions.test.ts',
  'test/scale/schedule.test.ts',
  'test/submission/greeting.test.ts',
  'test/tracking/rewrite.test.ts',
  'test/webhooks/dispatch.test.ts',
];

const shared = {
  setupFiles: ['./test/setup-env.ts'],
  // A worker process runs its files one after another in one module graph: importing the server's
  // modules (Fastify, knex, nodemailer, mailauth) anew for every file cost about three times the
  // tests' own time in a run. Each test starts its own servers and scratch databases, and
  // nothing of ours keeps state between them at module level beyond caches of pure results.
  isolate: false,
  testTimeout: 30_000,
  hookTimeout: 30_000,
  pool: 'forks' as const,
};

export default defineConfig({
  test: {
    globalSetup: ['./test/global-setup.ts'],
    reporters: ['default', './test/summary-reporter.ts'],
    projects: [
      { test: { ...shared, name: 'concurrent', include: ['test/**/*.test.ts'], exclude: TIMED, maxWorkers: 2, sequence: { groupOrder: 0 } } },
      { test: { ...shared, name: 'timed', include: TIMED, maxWorkers: 1, sequence: { groupOrder: 1 } } },
    ],
  },
});
