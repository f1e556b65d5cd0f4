// Where log lines go: JSON lines on stdout (production, pipes, log collectors), or, on a terminal in development,
// pino-pretty's readable lines (in process: a stream, not a pino transport worker, so the bundle needs no extra files).
import type { DestinationStream } from 'pino';
import pretty from 'pino-pretty';

export function logStream(nodeEnv: string, stdout: NodeJS.WriteStream = process.stdout): DestinationStream | undefined {
  if (nodeEnv === 'production' || !stdout.isTTY) return undefined;
  return pretty({ colorize: true, translateTime: 'HH:MM:ss.l', ignore: 'pid,hostname', destination: stdout });
}
