import type { Logger } from '../../src/core/ports.ts';

export interface LogLine {
  level: string;
  fields: Record<string, unknown>;
  msg?: string;
}

/** A logger that keeps its lines, and lets a test wait for the first one that matches. */
export function recordingLog() {
  const lines: LogLine[] = [];
  const waiters: { match(line: LogLine): boolean; found(line: LogLine): void }[] = [];
  const make = (bindings: Record<string, unknown>): Logger => {
    const at = (level: string) => (obj: object | string, msg?: string) => {
      const line = { level, fields: { ...bindings, ...(typeof obj === 'string' ? {} : obj) }, msg: typeof obj === 'string' ? obj : msg };
      lines.push(line);
      for (const w of waiters.filter((w) => w.match(line))) w.found(line);
    };
    return { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error'), child: (more) => make({ ...bindings, ...more }) };
  };
  return {
    log: make({}),
    lines,
    next: (match: (line: LogLine) => boolean) =>
      new Promise<LogLine>((found) => {
        const seen = lines.find(match);
        if (seen) found(seen);
        else waiters.push({ match, found });
      }),
  };
}
