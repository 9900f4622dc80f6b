import { Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import { postable } from '../../src/submission/thread-protocol.ts';

describe('log fields posted from the session thread', () => {
  it('keep errors as their fields and turn what cannot be copied to another thread into text', () => {
    const err = Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' });
    const socket = new Socket();
    const fields = { phase: 'data', ip: '127.0.0.1', rcpts: ['a@b.test'], err, socket };
    // A socket cannot cross threads as it is: the post would throw and end the sessions.
    expect(() => structuredClone(fields)).toThrow();
    const posted = structuredClone(postable(fields));
    expect(posted).toMatchObject({ phase: 'data', ip: '127.0.0.1', rcpts: ['a@b.test'], err: { type: 'Error', message: 'read ECONNRESET', code: 'ECONNRESET' } });
    expect((posted as { err: { stack: string } }).err.stack).toMatch(/^Error: read ECONNRESET/);
    expect((posted as { socket: unknown }).socket).toBe('[object Object]');
    expect(postable('a line')).toBe('a line');
    socket.destroy();
  });
});
