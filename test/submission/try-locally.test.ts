// docs/SUBMISSION.md's "Try it locally" recipes, taken from the page and run as written against a
// sandbox server, from a folder laid out like the repository (bin/, node_modules/, data/). The
// one change: port 1587 becomes the port the test server got.
import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { CLI, oneJson, runCli } from '../helpers/cli.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** The fenced blocks of one `##` section of a Markdown page, with their language. */
function blocks(page: string, heading: string): { lang: string; code: string }[] {
  const text = readFileSync(join(ROOT, page), 'utf8');
  const start = text.indexOf(`\n## ${heading}\n`);
  expect(start, `${page} has a "## ${heading}" section`).toBeGreaterThan(-1);
  const section = text.slice(start + 1).split(/\n## /)[0]!;
  return [...section.matchAll(/```(\w*)\n([\s\S]*?)```/g)].map((m) => ({ lang: m[1]!, code: m[2]! }));
}

const hasSwaks = spawnSync('sh', ['-c', 'command -v swaks'], { encoding: 'utf8' }).status === 0;

async function until<T>(read: () => Promise<T>, ok: (v: T) => boolean, ms: number, what: string): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await read();
    if (ok(v)) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('docs/SUBMISSION.md: try it locally', () => {
  const recipes = blocks('docs/SUBMISSION.md', 'Try it locally');
  const [setup, swaks, nodemailer] = recipes;
  let project: string;
  let config: string;
  let serve: ChildProcess;
  let port: string;
  let env: NodeJS.ProcessEnv;

  beforeAll(async () => {
    expect(recipes.map((r) => r.lang)).toStrictEqual(['sh', 'sh', 'js']);
    const scratch = mkdtempSync(join(tmpdir(), 'mailsvc-try-locally-'));
    project = join(scratch, 'project');
    mkdirSync(join(project, 'data'), { recursive: true });
    for (const name of ['bin', 'node_modules']) symlinkSync(join(ROOT, name), join(project, name));
    config = join(scratch, 'config.json');
    // As `npm run sandbox` in that folder: no hosts given (the sandbox takes 127.0.0.1), data/ here.
    writeFileSync(config, JSON.stringify({ dataDir: join(project, 'data'), submission: { port: 0, tlsPort: 0 }, inbound: { port: 0 } }));
    // spawnServe ties the server to one test; here it serves the whole file.
    serve = spawn(process.execPath, [CLI, '--config', config, 'serve', '--sandbox', '--http-port', '0'], {
      stdio: ['ignore', 'ignore', 'pipe'],
      env: { ...process.env, MAILSVC_LOG_LEVEL: 'info' },
    });
    const exited = once(serve, 'exit');
    let log = '';
    port = await new Promise<string>((resolve, reject) => {
      serve.stderr!.on('data', (d: Buffer) => {
        log += d.toString();
        const m = /SMTP submission listening on 127\.0\.0\.1:(\d+) \(STARTTLS\)/.exec(log);
        if (m && log.includes('"phase":"ready"')) resolve(m[1]!);
      });
      serve.once('exit', (code) => reject(new Error(`serve --sandbox exited ${code}: ${log}`)));
    });

    env = { ...process.env, MAILSVC_CONFIG: config };
    const shell = spawnSync('bash', ['-euo', 'pipefail', '-c', `${setup!.code}\necho "key=$API_KEY"`], { cwd: project, env, encoding: 'utf8' });
    expect(shell.status, shell.stderr).toBe(0);
    env.API_KEY = /^key=(mk_\S+)$/m.exec(shell.stdout)![1]!;
    env.MAILSVC_DELIVERY_MODE = 'sandbox';
    return async () => {
      serve.kill('SIGTERM');
      await exited;
      rmSync(scratch, { recursive: true, force: true });
    };
  }, 60_000);

  const captured = (subject: string) =>
    until(
      async () => oneJson(await runCli(['inbox', 'list', '--json'], { MAILSVC_CONFIG: config })) as { subject: string; dkim: { result: string } }[],
      (rows) => rows.some((r) => r.subject === subject),
      10_000,
      subject,
    );

  it('nodemailer: trusts the sandbox certificate and gets 250', async () => {
    writeFileSync(join(project, 'send-local.mjs'), nodemailer!.code.replaceAll('1587', port));
    const run = spawnSync(process.execPath, ['send-local.mjs'], { cwd: project, env, encoding: 'utf8', timeout: 20_000 });
    expect(run.status, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/^250 2\.0\.0 Ok: queued as \d+\n$/);
    expect((await captured('Hi from nodemailer')).find((r) => r.subject === 'Hi from nodemailer')!.dkim.result).toBe('pass');

    // The certificate is checked: without the sandbox's certificate as the authority, refused.
    const untrusting = nodemailer!.code.replaceAll('1587', port).replace(/^\s*ca: .*$/m, '');
    expect(untrusting).not.toBe(nodemailer!.code.replaceAll('1587', port));
    writeFileSync(join(project, 'send-untrusting.mjs'), untrusting);
    const refused = spawnSync(process.execPath, ['send-untrusting.mjs'], { cwd: project, env, encoding: 'utf8', timeout: 20_000 });
    expect([refused.status, refused.stderr]).toStrictEqual([1, expect.stringContaining('self-signed certificate')]);
  });

  it.skipIf(!hasSwaks)(`swaks${hasSwaks ? '' : ' (skipped: swaks is not installed)'}`, async () => {
    const out = execFileSync('bash', ['-euo', 'pipefail', '-c', swaks!.code.replaceAll('1587', port)], { cwd: project, env, encoding: 'utf8' });
    expect(out).toMatch(/<~ {1,2}250 2\.0\.0 Ok: queued as \d+/);
    await captured('Hi from swaks');
  });
});
