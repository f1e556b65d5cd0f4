// Types of directory-lock.js (plain JS so the schema-engine bridge can run it without TypeScript).
export const LOCK_FILE: string;
export interface DirectoryOwner {
  pid: number;
  hostname: string;
  startedAt: string;
  command?: string;
}
export class DirectoryLockedError extends Error {
  readonly code: 'PGLITE_DIR_LOCKED';
  readonly owner: DirectoryOwner | undefined;
  constructor(dir: string, owner: DirectoryOwner | undefined);
}
export function lockDirectory(dir: string): () => void;
export function openOwned<Handle extends { close(): Promise<void> }>(dir: string, open: () => Promise<Handle>): Promise<Handle>;
export function directoryOwner(dir: string): DirectoryOwner | undefined;
