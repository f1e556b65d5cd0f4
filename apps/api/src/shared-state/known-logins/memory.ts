// Known logins in this process's memory (one instance), expired entries swept as new ones come.
import type { KnownLoginStore } from './store.js';

export class MemoryKnownLoginStore implements KnownLoginStore {
  private readonly known = new Map<string, number>();

  async remember(key: string, ttlMs: number): Promise<void> {
    this.sweep();
    this.known.delete(key); // re-inserted last: entries stay in expiry order (every one lives equally long)
    this.known.set(key, Date.now() + ttlMs);
  }

  async has(key: string): Promise<boolean> {
    return (this.known.get(key) ?? 0) > Date.now();
  }

  private sweep(): void {
    const now = Date.now();
    for (const [key, expiresAt] of this.known) {
      if (expiresAt > now) break;
      this.known.delete(key);
    }
  }
}
