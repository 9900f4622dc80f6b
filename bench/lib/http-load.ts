// The HTTP load of `http-to-sink`: autocannon sending one POST /api/v1/emails per message, in the
// bench's own process.
import autocannon from 'autocannon';

/** The load being sent: how much of it was accepted so far. */
export interface Load {
  accepted(): number;
  done: Promise<void>;
  stop(): Promise<void>;
}

function httpBody(domain: string, bytes: number): string {
  const line = 'Your order has shipped and is on its way. Track it from your account page at any time.\n';
  return JSON.stringify({
    from: `News <news@${domain}>`,
    to: ['user@dest.test'],
    subject: 'Your order has shipped',
    text: line.repeat(Math.ceil(bytes / line.length)).slice(0, bytes),
  });
}

/** autocannon: one POST /api/v1/emails per message; fails unless every one is answered 2xx. */
export function httpLoad(port: number, apiKey: string, domain: string, opts: { sessions: number; bytes: number }, total: number): Load {
  let accepted = 0;
  let instance!: autocannon.Instance;
  const done = new Promise<void>((resolve, reject) => {
    instance = autocannon(
      {
        url: `http://127.0.0.1:${port}/api/v1/emails`,
        method: 'POST',
        connections: opts.sessions,
        amount: total,
        headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
        body: httpBody(domain, opts.bytes),
      },
      (err, result) => {
        if (err) reject(err instanceof Error ? err : new Error(String(err)));
        else if (result['2xx'] !== total) reject(new Error(`${result['2xx']} of ${total} requests answered 2xx (${result.non2xx} other, ${result.errors} errors)`));
        else resolve();
      },
    );
  });
  instance.on('response', (_client: unknown, status: number) => {
    if (status < 300) accepted++;
  });
  return {
    accepted: () => accepted,
    done,
    stop: async () => {
      instance.stop();
      await done.catch(() => undefined);
    },
  };
}
