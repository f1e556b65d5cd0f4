// What the figures were measured on: CPU model and count, memory, Node.js, PostgreSQL, date.
import { execFileSync } from 'node:child_process';
import os from 'node:os';

export function describeMachine(postgresVersion: string): string {
  let cpu = `${os.cpus().length} × ${os.cpus()[0]?.model ?? 'cpu'}`;
  try {
    const lscpu = execFileSync('lscpu', { encoding: 'utf8' });
    const field = (name: string) => new RegExp(`^${name}:\\s*(.+)$`, 'm').exec(lscpu)?.[1]?.trim();
    cpu = `${field('CPU\\(s\\)') ?? os.cpus().length} × ${field('Model name') ?? os.cpus()[0]?.model}`;
  } catch {
    // no lscpu: os.cpus() it is
  }
  return [
    `date ${new Date().toISOString()}`,
    `cpu ${cpu}`,
    `${Math.round(os.totalmem() / 2 ** 30)} GiB RAM`,
    `node ${process.version}`,
    postgresVersion,
    `${os.type()} ${os.release()}`,
  ].join(', ');
}
