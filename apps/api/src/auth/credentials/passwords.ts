// Password hashing with argon2id (@node-rs/argon2); the only place passwords are hashed or verified.
import { hash, verify } from '@node-rs/argon2';

/** argon2id is @node-rs/argon2's default algorithm (its `Algorithm` const enum cannot be imported under isolatedModules). */
export function hashPassword(password: string): Promise<string> {
  return hash(password);
}

export function verifyPassword(passwordHash: string, password: string): Promise<boolean> {
  return verify(passwordHash, password);
}
