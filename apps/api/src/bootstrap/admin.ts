// Creates or updates the administrator named by ADMIN_EMAIL / ADMIN_PASSWORD at start.
import type { PrismaClient } from '@users-posts/db';
import { hashPassword } from '../auth/passwords.js';

export async function ensureAdmin(prisma: PrismaClient, admin: { email: string; password: string }): Promise<number> {
  const email = admin.email.toLowerCase();
  const passwordHash = await hashPassword(admin.password);
  const user = await prisma.user.upsert({
    where: { email },
    create: { email, name: 'Administrator', role: 'ADMIN', passwordHash },
    update: { role: 'ADMIN', passwordHash },
  });
  return user.id;
}
