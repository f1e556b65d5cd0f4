// The Node.js binaries the bench runs servers on: BENCH_NODES majors (e.g. `24,20`) through scripts/ensure-node.sh,
// else the bench's own node; and a node new enough for PostGraphile 5 (Node >= 22).
import { execFileSync } from 'node:child_process';
import path from 'node:path';

export interface NodeBinary {
  path: string;
  /** e.g. v24.11.1 */
  version: string;
  major: number;
}

const repoRoot = path.resolve(import.meta.dirname, '..');

function describe(binary: string): NodeBinary {
  const version = execFileSync(binary, ['-v'], { encoding: 'utf8' }).trim();
  return { path: binary, version, major: Number(/^v(\d+)/.exec(version)?.[1]) };
}

/** A node of this major: the machine's own or one scripts/ensure-node.sh installs from the npm registry. */
export function nodeOfMajor(major: number): NodeBinary {
  if (Number(process.versions.node.split('.')[0]) === major) return describe(process.execPath);
  const binary = execFileSync('bash', [path.join(repoRoot, 'scripts/ensure-node.sh'), String(major)], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  }).trim();
  return describe(binary);
}

/** BENCH_NODES (comma-separated majors), default the bench's own node; the first runs the peers and the baseline too. */
export function benchNodes(): NodeBinary[] {
  const majors = (process.env.BENCH_NODES ?? '')
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean);
  if (!majors.length) return [describe(process.execPath)];
  return majors.map((major) => {
    if (!/^\d+$/.test(major)) throw new Error(`BENCH_NODES: "${major}" is not a Node.js major version (e.g. BENCH_NODES=24,20)`);
    return nodeOfMajor(Number(major));
  });
}

/** PostGraphile 5 needs Node >= 22 (Promise.withResolvers): `preferred` when new enough, else Node 24. */
export function postgraphileNode(preferred: NodeBinary): NodeBinary {
  return preferred.major >= 22 ? preferred : nodeOfMajor(24);
}
