import { describe, expect, it } from 'vitest';
import { randomBase62, randomHex } from '../../src/core/random.ts';

describe('randomHex', () => {
  it('gives the asked number of bytes as hex, never the same twice across refills of its pool', () => {
    const seen = new Set<string>();
    // 3,000 draws of 8 bytes cross the 4 KB pool several times, and 12-byte draws end it unevenly.
    for (let i = 0; i < 3000; i++) {
      const hex = randomHex(i % 2 === 0 ? 8 : 12);
      expect(hex).toMatch(i % 2 === 0 ? /^[0-9a-f]{16}$/ : /^[0-9a-f]{24}$/);
      seen.add(hex);
    }
    expect(seen.size).toBe(3000);
  });

  it('serves a request larger than its pool', () => {
    expect(randomHex(5000)).toMatch(/^[0-9a-f]{10000}$/);
  });

  it('uses every byte value, so no byte of the pool is left at a fixed value', () => {
    const counts = new Array<number>(256).fill(0);
    for (let i = 0; i < 2000; i++) {
      const hex = randomHex(16);
      for (let j = 0; j < hex.length; j += 2) counts[parseInt(hex.slice(j, j + 2), 16)]!++;
    }
    // 32,000 bytes: each value is expected 125 times; none absent, none dominant.
    expect(Math.min(...counts)).toBeGreaterThan(50);
    expect(Math.max(...counts)).toBeLessThan(250);
  });
});

describe('randomBase62', () => {
  it('gives the asked length from the base62 alphabet', () => {
    expect(randomBase62(40)).toMatch(/^[0-9A-Za-z]{40}$/);
  });
});
