// Throwaway directories for a test file: each call makes one under the temporary directory, all removed after the file.
import { afterAll } from '@jest/globals';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** A maker of new directories named `<prefix>XXXXXX`, removed (with what they hold) once the test file is done. */
export function temporaryDirectories(prefix: string): () => string {
  const dirs: string[] = [];
  afterAll(() => dirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })));
  return () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), prefix));
    dirs.push(dir);
    return dir;
  };
}
