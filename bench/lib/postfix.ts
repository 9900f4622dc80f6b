// A throwaway Postfix instance for the relay benches: its own configuration directory, queue
// and data directory under a temporary directory, listening on a loopback port, relaying
// everything from loopback to one destination (the sink); optionally with OpenDKIM as a milter,
// configured as Debian ships it apart from the key, the socket and logging. Its CPU time is read
// from /proc: the master's own and its reaped children's (cutime, cstime), the live children's,
// and OpenDKIM's.

import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { statOf, TICKS_PER_SECOND, ticksOf } from './proc.ts';
import { freePort, waitForPort } from './smtp.ts';

/** A Postfix that did not start, with the tail of its maillog. */
export class PostfixFailure extends Error {}

export interface PostfixInstance {
  port: number;
  /** CPU seconds used so far by the master, its children (live and reaped) and OpenDKIM. */
  cpuSeconds(): number;
  /** The last `lines` lines of the instance's maillog. */
  maillogTail(lines?: number): string;
  stop(): Promise<void>;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Running: not gone, and not a zombie (in a container, nobody may reap a master that exited). */
const alive = (pid: number): boolean => {
  const state = statOf(pid)?.[0];
  return state !== undefined && state !== 'Z';
};

function killQuietly(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // gone meanwhile
  }
}

function childrenOf(pid: number): number[] {
  return readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .map(Number)
    .filter((p) => Number(statOf(p)?.[1]) === pid);
}

function tailOf(file: string, lines: number): string {
  try {
    return readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '(no maillog)';
  }
}

function run(command: string, args: string[]): string {
  const r = spawnSync(command, args, { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`${command} ${args.join(' ')} failed: ${r.stderr}${r.stdout}`);
  return r.stdout;
}

/**
 * `postfix -c CONF STEP`. postfix(1) says why it failed on stderr only when that is a terminal
 * (else to the maillog, through a postlogd that is not running yet), so it gets one from
 * script(1) when there is one.
 */
function postfixCommand(conf: string, step: string): void {
  const quote = (arg: string) => `'${arg.replace(/'/g, "'\\''")}'`;
  const [command, args] = existsSync('/usr/bin/script')
    ? ['/usr/bin/script', ['-qec', ['postfix', '-c', conf, step].map(quote).join(' '), '/dev/null']]
    : ['postfix', ['-c', conf, step]];
  // With the port's 30 s after it, a Postfix that does not start is named within a minute.
  const r = spawnSync(command, args, { encoding: 'utf8', timeout: 20_000 });
  if (r.status !== 0)
    throw new Error(
      `postfix -c ${conf} ${step} exited ${r.signal ?? r.status}: ${`${r.stdout ?? ''}${r.stderr ?? ''}`.replace(/\r/g, '').trim().split('\n').slice(-10).join('\n')}`,
    );
}

const uidOf = (user: string) => ({ uid: Number(run('id', ['-u', user]).trim()), gid: Number(run('id', ['-g', user]).trim()) });

async function startOpendkim(dir: string, domain: string, onChild: (child: ChildProcess) => void): Promise<{ port: number; child: ChildProcess }> {
  const keys = join(dir, 'dkim');
  mkdirSync(keys);
  run('opendkim-genkey', ['-b', '2048', '-d', domain, '-s', 'bench', '-D', keys]);
  const { uid, gid } = uidOf('opendkim');
  chownSync(keys, uid, gid);
  chownSync(join(keys, 'bench.private'), uid, gid);
  chmodSync(join(keys, 'bench.private'), 0o600);
  const port = await freePort();
  const conf = join(dir, 'opendkim.conf');
  // Debian's /etc/opendkim.conf, with our key and socket, logging off.
  writeFileSync(
    conf,
    [
      'Syslog no',
      'Canonicalization relaxed/simple',
      'OversignHeaders From',
      'UserID opendkim',
      'UMask 007',
      `Socket inet:${port}@127.0.0.1`,
      `PidFile ${join(dir, 'opendkim.pid')}`,
      'Mode s',
      // The key sits under /var/tmp, which others may write to; opendkim would refuse it.
      'RequireSafeKeys false',
      `Domain ${domain}`,
      'Selector bench',
      `KeyFile ${join(keys, 'bench.private')}`,
      '',
    ].join('\n'),
  );
  chmodSync(dir, 0o755);
  const child = spawn('/usr/sbin/opendkim', ['-f', '-x', conf], { stdio: ['ignore', 'inherit', 'inherit'] });
  onChild(child);
  await waitForPort(port, 'opendkim (the milter of postfix+opendkim)');
  return { port, child };
}

export async function startPostfix(opts: { relayTo: number; dkimDomain?: string }): Promise<PostfixInstance> {
  // Postfix and opendkim drop to their own users, who must reach the directory: /tmp may be
  // private to root, /var/tmp is open to all.
  const base = (statSync(tmpdir()).mode & 0o001) !== 0 ? tmpdir() : '/var/tmp';
  const dir = mkdtempSync(join(base, 'mailsvc-bench-postfix-'));
  chmodSync(dir, 0o755);
  const conf = join(dir, 'etc');
  const maillog = join(dir, 'maillog');
  const masterPidFile = join(dir, 'spool', 'pid', 'master.pid');
  let opendkim: ChildProcess | undefined;
  let masterPid: number | undefined;
  const readMasterPid = (): number | undefined => {
    try {
      masterPid ??= Number(readFileSync(masterPidFile, 'utf8').trim()) || undefined;
    } catch {
      // not written yet, or never: the master did not start
    }
    return masterPid;
  };
  const stop = async () => {
    const pid = readMasterPid();
    if (existsSync(conf)) spawnSync('postfix', ['-c', conf, 'stop'], { stdio: 'ignore', timeout: 15_000 });
    if (pid) {
      for (let i = 0; i < 50 && alive(pid); i++) await sleep(100);
      // What `postfix stop` left: the master and its children, killed.
      if (alive(pid)) for (const p of [...childrenOf(pid), pid]) killQuietly(p);
    }
    if (opendkim && opendkim.exitCode === null && opendkim.signalCode === null) {
      const exited = once(opendkim, 'exit');
      opendkim.kill();
      const timer = setTimeout(() => opendkim?.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(timer);
    }
    rmSync(dir, { recursive: true, force: true });
  };
  const failed = (what: string, err: unknown): Error =>
    new PostfixFailure(
      `postfix${opts.dkimDomain ? '+opendkim' : ''}: ${what}: ${err instanceof Error ? err.message : String(err)}\npostfix maillog tail:\n${tailOf(maillog, 10)}`,
    );
  try {
    for (const sub of ['etc', 'spool', 'lib']) mkdirSync(join(dir, sub));
    const postfixUser = uidOf('postfix');
    chownSync(join(dir, 'lib'), postfixUser.uid, postfixUser.gid);
    const milter = opts.dkimDomain ? await startOpendkim(dir, opts.dkimDomain, (child) => (opendkim = child)) : null;
    const port = await freePort();
    writeFileSync(
      join(conf, 'main.cf'),
      [
        'compatibility_level = 3.6',
        `queue_directory = ${join(dir, 'spool')}`,
        `data_directory = ${join(dir, 'lib')}`,
        'mail_owner = postfix',
        'setgid_group = postdrop',
        'myhostname = relay.bench.test',
        'mydestination =',
        'inet_interfaces = 127.0.0.1',
        'inet_protocols = ipv4',
        'mynetworks = 127.0.0.0/8',
        'smtpd_relay_restrictions = permit_mynetworks, reject',
        `relayhost = [127.0.0.1]:${opts.relayTo}`,
        'alias_maps =',
        'alias_database =',
        'local_recipient_maps =',
        `maillog_file = ${join(dir, 'maillog')}`,
        `maillog_file_prefixes = ${dir}`,
        'biff = no',
        ...(milter ? [`smtpd_milters = inet:127.0.0.1:${milter.port}`, 'non_smtpd_milters = $smtpd_milters', 'milter_default_action = tempfail'] : []),
        '',
      ].join('\n'),
    );
    // Debian's master.cf, the smtpd listener moved to our port, no chroot (the queue is ours).
    const master = readFileSync('/etc/postfix/master.cf', 'utf8')
      .split('\n')
      .map((line) => (/^smtp\s+inet\s/.test(line) ? line.replace(/^smtp\s+inet\s+\S+\s+\S+\s+\S+/, `127.0.0.1:${port} inet n - n`) : line))
      .join('\n');
    writeFileSync(join(conf, 'master.cf'), master);
    run('postconf', ['-c', conf, '-F', '*/*/chroot = n']);
    for (const step of ['check', 'start']) {
      try {
        postfixCommand(conf, step);
      } catch (err) {
        throw failed(`\`postfix ${step}\` failed`, err);
      }
    }
    await waitForPort(port, 'its smtpd').catch((err: unknown) => {
      throw failed('it did not start', err);
    });
    return {
      port,
      cpuSeconds: () => {
        const pid = readMasterPid();
        // Children first: one reaped meanwhile is then counted twice rather than not at all.
        const children = pid ? childrenOf(pid).reduce((sum, p) => sum + (ticksOf(p, true) ?? 0), 0) : 0;
        const master = pid ? (ticksOf(pid, true) ?? 0) : 0;
        return (children + master + (opendkim?.pid ? (ticksOf(opendkim.pid, true) ?? 0) : 0)) / TICKS_PER_SECOND;
      },
      maillogTail: (lines = 10) => tailOf(maillog, lines),
      stop,
    };
  } catch (err) {
    await stop();
    throw err instanceof PostfixFailure ? err : failed('it did not start', err);
  }
}
