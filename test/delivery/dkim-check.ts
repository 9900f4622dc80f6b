import { spawnSync } from 'node:child_process';
import { dkimVerify } from 'mailauth/lib/dkim/verify.js';
import type { TestContext } from 'vitest';
import { createDnsResolver } from '../../src/dns/resolver.ts';

/** mailauth's verdict on every signature of `message`, looking keys up in the given DNS server. */
export async function mailauthVerdict(message: Buffer, dnsAddress: string): Promise<string[]> {
  const resolver = createDnsResolver([dnsAddress], 2000);
  const lookup = (name: string, rrtype: string): Promise<string[][] | string[]> => {
    if (rrtype === 'TXT') return resolver.resolveTxt(name);
    if (rrtype === 'A') return resolver.resolve4(name);
    if (rrtype === 'AAAA') return resolver.resolve6(name);
    return Promise.reject(Object.assign(new Error(`unsupported ${rrtype}`), { code: 'ENOTFOUND' }));
  };
  const result = await dkimVerify(message, { resolver: lookup });
  return result.results.map((entry: { status: { result: string } }) => entry.status.result);
}

/** dkimpy (Debian's python3-dkim) lives in the system python, not always the first python3 on PATH. */
export const dkimpyPython: string | null = (() => {
  for (const python of ['python3', '/usr/bin/python3']) {
    if (spawnSync(python, ['-c', 'import dkim'], { stdio: 'ignore' }).status === 0) return python;
  }
  return null;
})();

export const DKIMPY_MISSING = 'python3-dkim (dkimpy) is not installed';

/**
 * Without dkimpy, says on a test that checks more than dkimpy that its dkimpy cross-check did not
 * run: an annotation the run's summary lists (test/summary-reporter.ts), not a silent pass.
 */
export async function noteWithoutDkimpy(ctx: TestContext): Promise<void> {
  if (!dkimpyPython) await ctx.annotate(`the dkimpy cross-check did not run: ${DKIMPY_MISSING}`, 'skipped');
}

const DKIMPY_VERIFY = `
import dkim, os, sys
record = os.environ['DKIM_TXT'].encode()
def dnsfunc(name, timeout=5):
    return record if name.decode().rstrip('.') == os.environ['DKIM_NAME'] else None
sys.stdout.write('pass' if dkim.verify(sys.stdin.buffer.read(), dnsfunc=dnsfunc) else 'fail')
`;

/** dkimpy's verdict, answering its one DNS question with the record we published. */
export function dkimpyVerdict(message: Buffer, name: string, txt: string): string {
  const run = spawnSync(dkimpyPython!, ['-c', DKIMPY_VERIFY], { input: message, env: { ...process.env, DKIM_TXT: txt, DKIM_NAME: name } });
  if (run.status !== 0) throw new Error(`dkimpy failed: ${run.stderr.toString()}`);
  return run.stdout.toString();
}

const DKIMPY_VERIFY_EACH = `
import dkim, json, os, sys
records = json.loads(os.environ['DKIM_RECORDS'])
def dnsfunc(name, timeout=5):
    value = records.get(name.decode().rstrip('.'))
    return value.encode() if value is not None else None
checker = dkim.DKIM(sys.stdin.buffer.read())
count = sum(1 for name, _ in checker.headers if name.lower() == b'dkim-signature')
sys.stdout.write(' '.join('pass' if checker.verify(idx=i, dnsfunc=dnsfunc) else 'fail' for i in range(count)))
`;

/** dkimpy's verdict on each DKIM-Signature of `message`, top first, answering DNS from `records` (name to TXT). */
export function dkimpyVerdicts(message: Buffer, records: Record<string, string>): string[] {
  const run = spawnSync(dkimpyPython!, ['-c', DKIMPY_VERIFY_EACH], { input: message, env: { ...process.env, DKIM_RECORDS: JSON.stringify(records) } });
  if (run.status !== 0) throw new Error(`dkimpy failed: ${run.stderr.toString()}`);
  return run.stdout.toString().split(' ').filter(Boolean);
}
