import { connect, type Socket } from 'node:net';
import { connect as tlsConnect, type TLSSocket } from 'node:tls';

export interface Reply {
  code: number;
  /** All lines of the reply joined with "\n", codes stripped. */
  text: string;
}

/**
 * A raw SMTP client over a socket: sends exactly the bytes a test says, including what a hostile
 * or broken peer would send, and reads each reply (multi-line aware).
 */
export class RawSmtp {
  private buffer = '';
  private lines: string[] = [];
  private waiters: ((r: Reply | Error) => void)[] = [];
  private replies: Reply[] = [];
  closed: Promise<void>;
  greeting!: Reply;

  private constructor(private socket: Socket | TLSSocket) {
    this.closed = new Promise((resolve) => socket.once('close', () => resolve()));
    this.attach(socket);
  }

  private attach(socket: Socket | TLSSocket) {
    socket.on('data', (d: Buffer) => this.onData(d));
    socket.on('error', () => undefined);
    socket.on('close', () => {
      for (const w of this.waiters.splice(0)) w(new Error('connection closed'));
    });
  }

  /** `localAddress` picks the client's loopback address (127.0.0.2 ...); `prelude` is written before the greeting (a PROXY header). */
  static async connect(port: number, options: { localAddress?: string; prelude?: Buffer | string } = {}): Promise<RawSmtp> {
    const socket = connect({ host: '127.0.0.1', port, localAddress: options.localAddress });
    const client = new RawSmtp(socket);
    if (options.prelude !== undefined) socket.write(options.prelude);
    client.greeting = await client.read();
    return client;
  }

  private onData(d: Buffer) {
    this.buffer += d.toString('latin1');
    let i: number;
    while ((i = this.buffer.indexOf('\r\n')) >= 0) {
      const line = this.buffer.slice(0, i);
      this.buffer = this.buffer.slice(i + 2);
      this.lines.push(line.slice(4));
      if (/^\d{3} /.test(line) || /^\d{3}$/.test(line)) {
        const reply = { code: Number(line.slice(0, 3)), text: this.lines.join('\n') };
        this.lines = [];
        const w = this.waiters.shift();
        if (w) w(reply);
        else this.replies.push(reply);
      }
    }
  }

  read(): Promise<Reply> {
    const ready = this.replies.shift();
    if (ready) return Promise.resolve(ready);
    return new Promise((resolve, reject) => this.waiters.push((r) => (r instanceof Error ? reject(r) : resolve(r))));
  }

  async command(line: string): Promise<Reply> {
    this.socket.write(`${line}\r\n`);
    return this.read();
  }

  /** STARTTLS, then the TLS handshake on the same socket (the listener's certificate is self-signed). */
  async starttls(): Promise<{ reply: Reply; socket: TLSSocket }> {
    const reply = await this.command('STARTTLS');
    if (reply.code !== 220) throw new Error(`STARTTLS refused: ${reply.code} ${reply.text}`);
    this.socket.removeAllListeners('data');
    const secure = tlsConnect({ socket: this.socket as Socket, rejectUnauthorized: false, servername: 'localhost' });
    await new Promise<void>((resolve, reject) => {
      secure.once('secureConnect', () => resolve());
      secure.once('error', reject);
    });
    this.socket = secure;
    this.attach(secure);
    return { reply, socket: secure };
  }

  /** DATA with the body dot-stuffed and terminated; returns the reply to the final dot. */
  async data(body: Buffer | string): Promise<Reply> {
    const go = await this.command('DATA');
    if (go.code !== 354) return go;
    let text = (Buffer.isBuffer(body) ? body.toString('latin1') : body).replace(/\r?\n/g, '\r\n');
    text = text.replace(/^\./gm, '..');
    if (!text.endsWith('\r\n')) text += '\r\n';
    this.socket.write(Buffer.from(`${text}.\r\n`, 'latin1'));
    return this.read();
  }

  /** DATA whose body is written chunk by chunk with back-pressure (large messages). */
  async dataStream(chunks: Iterable<Buffer>): Promise<Reply> {
    const go = await this.command('DATA');
    if (go.code !== 354) return go;
    for (const chunk of chunks) {
      if (!this.socket.write(chunk)) await new Promise((r) => this.socket.once('drain', r));
    }
    this.socket.write('\r\n.\r\n');
    return this.read();
  }

  /** Writes bytes as they are, no reply expected. */
  write(bytes: Buffer | string) {
    this.socket.write(bytes);
  }

  async quit(): Promise<void> {
    if (!this.socket.destroyed) {
      try {
        await this.command('QUIT');
      } catch {
        // already closed by the server
      }
    }
    this.socket.destroy();
  }

  destroy() {
    this.socket.destroy();
  }
}

/** One whole transaction; returns the replies to MAIL, each RCPT and (when any RCPT passed) DATA. */
export async function sendMail(port: number, from: string, to: string[], body: Buffer | string) {
  const c = await RawSmtp.connect(port);
  try {
    await c.command('EHLO mx.example.org');
    const mail = await c.command(`MAIL FROM:<${from}>`);
    const rcpt: Reply[] = [];
    for (const t of to) rcpt.push(await c.command(`RCPT TO:<${t}>`));
    const data = rcpt.some((r) => r.code === 250) ? await c.data(body) : null;
    return { mail, rcpt, data };
  } finally {
    await c.quit();
  }
}
