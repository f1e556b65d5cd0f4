// Turns an error that stopped the start (config, data directory, database, port) into one human line that says the fix.
// Hand-written: no kept library maps Node's system errors to operator advice.
import net from 'node:net';
import path from 'node:path';
import { dataDirectories } from './paths.js';

/** Thrown by the database plugin when PostgreSQL cannot be used at start; names the server without the password. */
export class DatabaseUnreachableError extends Error {
  constructor(databaseUrl: string, cause: unknown) {
    const where = describeDatabaseUrl(databaseUrl);
    super(
      `cannot connect to PostgreSQL at ${where} (DATABASE_URL): ${redact(databaseReason(cause), databaseUrl)}. Check that the ` +
        'server runs and accepts connections from this host, and the user, password and database name in DATABASE_URL',
      { cause },
    );
    this.name = 'DatabaseUnreachableError';
  }
}

/** `user@host:port/database` of a postgres:// URL; never the password. */
export function describeDatabaseUrl(databaseUrl: string): string {
  try {
    const url = new URL(databaseUrl);
    const user = url.username ? `${decodeURIComponent(url.username)}@` : '';
    return `${user}${url.hostname || 'localhost'}:${url.port || '5432'}${url.pathname.length > 1 ? url.pathname : ''}`;
  } catch {
    return 'the server named by DATABASE_URL';
  }
}

const DATA_DIRECTORY_CODES = new Set(['EACCES', 'EPERM', 'EROFS', 'ENOTDIR', 'ENOSPC', 'EEXIST', 'ENOENT']);

/** The one line to print for `error` (a thrown start-up error); `env` names the settings the fix refers to. */
export function startupFailureLine(error: unknown, env: NodeJS.ProcessEnv = process.env): string {
  const code = errorCode(error);
  const system = error as { syscall?: string; port?: number; address?: string; path?: string };
  if (system.syscall === 'listen' && code === 'EADDRINUSE') {
    return `port ${system.port} on ${system.address} is already in use: stop the process that holds it, or set PORT (now ${env.PORT ?? 'unset'}) to a free port`;
  }
  if (system.syscall === 'listen' && (code === 'EACCES' || code === 'EADDRNOTAVAIL')) {
    return `cannot listen on ${system.address}:${system.port} (${code}): set PORT to a port above 1023 and HOST to an address of this machine`;
  }
  if (system.path && code && DATA_DIRECTORY_CODES.has(code) && system.syscall !== 'listen') {
    if (onDataDirectoryPath(system.path, env)) {
      return (
        `cannot write the data directory: ${code} on ${system.path}. Make it writable by this user, or set DATA_DIR ` +
        `(now ${env.DATA_DIR ?? '.data'}) or PGLITE_DIR (the embedded database; now ${env.PGLITE_DIR ?? '<DATA_DIR>/pglite'}) to a writable directory`
      );
    }
    // Not the operator's directory: a file of the installation (a build's copied assets, a package's file) or the
    // temporary directory. Pointing at DATA_DIR here sent the operator to fix the wrong thing.
    return (
      `cannot open ${system.path} (${code}), a file or directory this server needs outside its data directory: ` +
      'if it belongs to the installation, build (pnpm build) or install (pnpm install) again; if it is in the temporary ' +
      'directory, make that writable or set TMPDIR'
    );
  }
  const message = error instanceof Error ? error.message : String(error);
  return firstLine(message) || String(code ?? 'unknown error');
}

/** Whether `file` is the data directory or PGLITE_DIR, inside one, or a parent that creating one would need. */
function onDataDirectoryPath(file: string, env: NodeJS.ProcessEnv): boolean {
  const target = path.resolve(file);
  const within = (parent: string, child: string) => child === parent || child.startsWith(parent + path.sep);
  return Object.values(dataDirectories(env)).some((directory) => within(directory, target) || within(target, directory));
}

/**
 * What the driver said: the adapter's DriverAdapterError carries it as `cause`, the Prisma client wraps that error
 * (meta.driverAdapterError) under a generic first line, and the pg driver's own errors say it themselves.
 */
function databaseReason(error: unknown): string {
  type Wrapped = { cause?: Record<string, unknown>; meta?: { driverAdapterError?: { cause?: Record<string, unknown> } } } | null;
  const cause = (error as Wrapped)?.meta?.driverAdapterError?.cause ?? (error as Wrapped)?.cause;
  if (typeof cause?.originalMessage === 'string') return cause.originalMessage;
  if (cause?.kind === 'DatabaseNotReachable') return `nothing answers at ${String(cause.host)}:${String(cause.port)}`;
  if (typeof cause?.kind === 'string') return cause.kind;
  // The pg driver's own (the start's ping, on PostgreSQL, goes to the adapter's pool): a refused connection, also as
  // the AggregateError of every address of a host name tried in turn.
  const refused = refusedConnection(error);
  if (refused) return `nothing answers at ${refused}`;
  const unresolved = error as { code?: unknown; hostname?: unknown } | null;
  if ((unresolved?.code === 'ENOTFOUND' || unresolved?.code === 'EAI_AGAIN') && typeof unresolved.hostname === 'string')
    return `nothing answers at ${unresolved.hostname}: the host name does not resolve (${unresolved.code})`;
  return firstLine(error instanceof Error ? error.message : String(error)) || errorCode(error) || 'no answer';
}

function refusedConnection(error: unknown): string | undefined {
  type Refused = { code?: unknown; address?: unknown; port?: unknown; errors?: unknown[] } | null;
  const refused = error as Refused;
  if (refused?.code !== 'ECONNREFUSED') return undefined;
  const first = (refused.errors?.[0] as Refused) ?? refused;
  return typeof first?.address === 'string' ? `${first.address}:${String(first.port)}` : 'that address';
}

function errorCode(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

function firstLine(text: string): string {
  return text.trim().split('\n')[0]!.trim();
}

function redact(text: string, databaseUrl: string): string {
  let password = '';
  try {
    password = decodeURIComponent(new URL(databaseUrl).password);
  } catch {
    // not a URL: nothing to hide beyond the URL itself
  }
  return (password ? text.split(password).join('***') : text).split(databaseUrl).join('DATABASE_URL');
}

/**
 * Fails at once (EADDRINUSE, as listen would) when host:port is taken, before seconds of opening the database and
 * building the app; the real listen comes after. Port 0 (any free port) is not checked.
 */
export async function assertPortFree(host: string, port: number): Promise<void> {
  if (port === 0) return;
  const probe = net.createServer();
  await new Promise<void>((resolve, reject) => {
    probe.once('error', reject);
    probe.listen({ host, port, exclusive: true }, resolve);
  });
  await new Promise((resolve) => probe.close(resolve));
}
