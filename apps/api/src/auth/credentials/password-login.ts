// Password credentials: the user an email and password name, or none, in the same time either way.
import type { PrismaClient, User } from '@users-posts/db';
import { randomSecret } from '../hashing.js';
import { hashPassword, verifyPassword } from './passwords.js';

export class PasswordCredentials {
  // An unknown email still costs one argon2 verification, so timing does not reveal which emails exist.
  private dummyHash: Promise<string> | undefined;

  constructor(private readonly prisma: PrismaClient) {}

  /** The user whose email and password these are; undefined for a wrong password, an unknown email, or no password. */
  async verify(email: string, password: string): Promise<User | undefined> {
    const user = await this.prisma.user.findUnique({ where: { email: email.toLowerCase() } });
    if (!user?.passwordHash) {
      await verifyPassword(await (this.dummyHash ??= hashPassword(randomSecret())), password);
      return undefined;
    }
    return (await verifyPassword(user.passwordHash, password)) ? user : undefined;
  }
}
