// Summarises a V8 .cpuprofile (node --cpu-prof): self time by package and by function. Run: tsx bench/cpuprofile.ts FILE [top]
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** Where a script belongs: an npm package (pnpm store path), our own sources, Node's internals, or V8's pseudo-frames. */
export function owner(url: string, functionName: string): string {
  if (!url) return functionName.startsWith('(') ? functionName : '(native)';
  const pnpm = /node_modules\/\.pnpm\/[^/]+\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url);
  if (pnpm) return pnpm[1]!;
  const plain = /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url);
  if (plain) return plain[1]!;
  if (url.startsWith('node:')) return 'node:internals';
  const repo = /\/(apps\/[^/]+|packages\/[^/]+|bench)\//.exec(url);
  return repo ? repo[1]! : url;
}

export interface ProfileSummary {
  totalMs: number;
  byPackage: [string, number][];
  byFunction: [string, number][];
  /** Time with the function anywhere on the stack (its callees included), each sample counted once per function. */
  inclusive: [string, number][];
}

export function summarise(profile: CpuProfile): ProfileSummary {
  const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
  const selfUs = new Map<number, number>();
  profile.samples.forEach((id, i) => selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));
  const byPackage = new Map<string, number>();
  const byFunction = new Map<string, number>();
  let total = 0;
  for (const [id, us] of selfUs) {
    const { functionName, url, lineNumber } = nodes.get(id)!.callFrame;
    const pkg = owner(url, functionName);
    total += us;
    byPackage.set(pkg, (byPackage.get(pkg) ?? 0) + us);
    const where = url ? `${path.basename(url)}:${lineNumber + 1}` : '';
    const key = `${functionName || '(anonymous)'} ${where} [${pkg}]`;
    byFunction.set(key, (byFunction.get(key) ?? 0) + us);
  }
  // Inclusive time: walk each sampled node's ancestors once.
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const inclusive = new Map<string, number>();
  for (const [id, us] of selfUs) {
    const seen = new Set<string>();
    for (let cursor: number | undefined = id; cursor !== undefined; cursor = parent.get(cursor)) {
      const { functionName, url, lineNumber } = nodes.get(cursor)!.callFrame;
      if (!url) continue;
      const key = `${functionName || '(anonymous)'} ${path.basename(url)}:${lineNumber + 1} [${owner(url, functionName)}]`;
      if (seen.has(key)) continue;
      seen.add(key);
      inclusive.set(key, (inclusive.get(key) ?? 0) + us);
    }
  }
  const sorted = (map: Map<string, number>) => [...map].sort((a, b) => b[1] - a[1]).map(([key, us]) => [key, us / 1000] as [string, number]);
  return { totalMs: total / 1000, byPackage: sorted(byPackage), byFunction: sorted(byFunction), inclusive: sorted(inclusive) };
}

export function printSummary(summary: ProfileSummary, top = 25): void {
  const pct = (ms: number) => `${((ms / summary.totalMs) * 100).toFixed(1).padStart(5)} %`;
  console.log(`total sampled: ${Math.round(summary.totalMs)} ms\n\nself time by package:`);
  for (const [name, ms] of summary.byPackage.slice(0, top)) console.log(`  ${pct(ms)}  ${Math.round(ms).toString().padStart(6)} ms  ${name}`);
  console.log('\nself time by function:');
  for (const [name, ms] of summary.byFunction.slice(0, top)) console.log(`  ${pct(ms)}  ${Math.round(ms).toString().padStart(6)} ms  ${name}`);
  console.log('\ntotal (inclusive) time by function, own code and packages:');
  for (const [name, ms] of summary.inclusive.slice(0, top * 2)) console.log(`  ${pct(ms)}  ${Math.round(ms).toString().padStart(6)} ms  ${name}`);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const file = process.argv[2];
  if (!file) throw new Error('usage: tsx bench/cpuprofile.ts FILE.cpuprofile [top]');
  printSummary(summarise(JSON.parse(readFileSync(file, 'utf8')) as CpuProfile), Number(process.argv[3] ?? 25));
}
