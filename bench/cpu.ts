// CPU time a process has used (user + system, from /proc), to report CPU per request: robust to other load on the machine.
import { readFileSync } from 'node:fs';

const TICKS_PER_SECOND = 100; // USER_HZ: 100 on every Linux architecture Node.js runs on

/** Milliseconds of CPU the process has used so far; NaN where /proc is unavailable. */
export function processCpuMs(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name (which may contain spaces, hence the last ')'): utime is the 14th field, stime the 15th.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS_PER_SECOND;
  } catch {
    return NaN;
  }
}

/** Runs `work` (which returns how many requests it completed) and returns the process's CPU microseconds per request. */
export async function cpuPerRequest(pid: number, work: () => Promise<number>): Promise<{ units: number; cpuUs: number }> {
  const before = processCpuMs(pid);
  const units = await work();
  const after = processCpuMs(pid);
  return { units, cpuUs: units ? Math.round(((after - before) * 1000) / units) : NaN };
}
