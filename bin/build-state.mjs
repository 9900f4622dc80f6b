// Whether dist/ (see bin/build.mjs) is current: its stamp, dist/.built, is at least as new as
// every file and folder under src/ and console/ and as the lockfile of the installed packages (dist/vendor/
// holds copies of some). Folders count so that a deleted source file makes the build stale too.
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('..', import.meta.url));

export function buildIsCurrent(root = ROOT) {
  const stamp = statSync(join(root, 'dist', '.built'), { throwIfNoEntry: false });
  if (!stamp) return false;
  const dirs = [join(root, 'src'), join(root, 'console')].filter((dir) => existsSync(dir));
  const inputs = [...dirs.flatMap((dir) => [dir, ...readdirSync(dir, { recursive: true }).map((p) => join(dir, p))]), join(root, 'node_modules', '.package-lock.json')];
  return inputs.every((p) => (statSync(p, { throwIfNoEntry: false })?.mtimeMs ?? 0) <= stamp.mtimeMs);
}
