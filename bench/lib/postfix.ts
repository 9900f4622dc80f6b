// A throwaway Postfix instance for the relay benches: its own configuration directory, queue
// and data directory under a temporary directory, listening on a loopback port, relaying
// everything from loopback to one destination (the sink); optionally with OpenDKIM as a milter,
// configured as Debian ships it apart from the key, the socket and logging.

import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { chmodSync, chownSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, waitForPort } from './smtp.ts';

export interface PostfixInstance {
  port: number;
  stop(): Promise<void>;
}

function run(command: string, args: string[]): string {
  const r = spawnSync(command, args, { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`${command} ${args.join(' ')} failed: ${r.stderr}${r.stdout}`);
  return r.stdout;
}

const uidOf = (user: string) => ({ uid: Number(run('id', ['-u', user]).trim()), gid: Number(run('id', ['-g', user]).trim()) });

async function startOpendkim(dir: string, domain: string): Promise<{ port: number; child: ChildProcess }> {
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
  await waitForPort(port);
  return { port, child };
}

export async function startPostfix(opts: { relayTo: number; dkimDomain?: string }): Promise<PostfixInstance> {
  // Postfix and opendkim drop to their own users, who must reach the directory: /tmp may be
  // private to root, /var/tmp is open to all.
  const base = (statSync(tmpdir()).mode & 0o001) !== 0 ? tmpdir() : '/var/tmp';
  const dir = mkdtempSync(join(base, 'mailsvc-bench-postfix-'));
  chmodSync(dir, 0o755);
  const conf = join(dir, 'etc');
  for (const sub of ['etc', 'spool', 'lib']) mkdirSync(join(dir, sub));
  const postfixUser = uidOf('postfix');
  chownSync(join(dir, 'lib'), postfixUser.uid, postfixUser.gid);
  const milter = opts.dkimDomain ? await startOpendkim(dir, opts.dkimDomain) : null;
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
  run('postfix', ['-c', conf, 'check']);
  run('postfix', ['-c', conf, 'start']);
  await waitForPort(port);
  return {
    port,
    stop: async () => {
      spawnSync('postfix', ['-c', conf, 'stop'], { stdio: 'ignore' });
      if (milter) {
        milter.child.kill();
        await once(milter.child, 'exit');
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
