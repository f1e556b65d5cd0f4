// CPU time a process has used (user + system, from /proc), to report CPU per request: robust to other load on the machine.
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import os from 'node:os';

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

/**
 * Milliseconds of CPU each kind of thread of the process has used so far, user and kernel apart, by thread name
 * (`main thread`, `V8Worker` V8's helpers (parallel GC, compilers), `libuv-worker` the thread pool, …); empty without
 * /proc.
 */
export function threadCpuMs(pid: number): Map<string, { userMs: number; systemMs: number }> {
  const byName = new Map<string, { userMs: number; systemMs: number }>();
  let tasks: string[] = [];
  try {
    tasks = readdirSync(`/proc/${pid}/task`);
  } catch {
    return byName;
  }
  for (const task of tasks) {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${task}/stat`, 'utf8');
      const name = task === String(pid) ? 'main thread' : stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const sum = byName.get(name) ?? { userMs: 0, systemMs: 0 };
      sum.userMs += (Number(fields[11]) * 1000) / TICKS_PER_SECOND;
      sum.systemMs += (Number(fields[12]) * 1000) / TICKS_PER_SECOND;
      byName.set(name, sum);
    } catch {
      // the thread ended meanwhile
    }
  }
  return byName;
}

/** Runs `work` (which returns how many requests it completed) and returns the process's CPU microseconds per request. */
export async function cpuPerRequest(pid: number, work: () => Promise<number>): Promise<{ units: number; cpuUs: number }> {
  const before = processCpuMs(pid);
  const units = await work();
  const after = processCpuMs(pid);
  return { units, cpuUs: units ? Math.round(((after - before) * 1000) / units) : NaN };
}

/**
 * Pins every thread of process `pid` to the CPUs `cpus` (taskset's list form, e.g. `0` or `1-3`); its later threads and
 * children inherit them. False where taskset or a second CPU is missing. bench:profile keeps the server under test on
 * a CPU of its own, so that its profile's samples are its CPU time, not time PostgreSQL or the load generator took from it.
 */
export function pinToCpus(pid: number, cpus: string): boolean {
  if (os.availableParallelism() < 2) return false;
  try {
    execFileSync('taskset', ['-a', '-p', '-c', cpus, String(pid)], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}
