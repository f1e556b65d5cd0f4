// Which user an OpenID Connect login is: the account linked to (provider, sub), else the user with that verified e-mail, else a new USER.
import { Prisma, type PrismaClient } from '@users-posts/db';
import { AppError } from '../errors.js';
import type { OidcProfile } from './oauth-flow.js';

const NAME_MAX = 100;
const EMAIL_MAX = 254;

/** The `name` claim, else the e-mail's local part, cut to the User name limit. */
function displayName(profile: OidcProfile, email: string): string {
  const name = profile.name ?? email.slice(0, email.lastIndexOf('@'));
  return name.slice(0, NAME_MAX) || 'user';
}

/**
 * Only an e-mail the provider vouches for may select or create a user: an unverified one would let anyone who can
 * type another person's address at some provider log in as that person here.
 */
function verifiedEmail(profile: OidcProfile): string {
  if (!profile.email || !profile.emailVerified) {
    throw new AppError('UNAUTHENTICATED', 'The identity provider did not confirm a verified e-mail address');
  }
  const email = profile.email.toLowerCase();
  if (email.length > EMAIL_MAX || !/^[^@\s]+@[^@\s]+$/.test(email)) {
    throw new AppError('UNAUTHENTICATED', 'The identity provider returned an unusable e-mail address');
  }
  return email;
}

async function resolve(prisma: PrismaClient, provider: string, profile: OidcProfile) {
  return prisma.$transaction(async (tx) => {
    const account = await tx.oAuthAccount.findUnique({
      where: { provider_subject: { provider, subject: profile.subject } },
      include: { user: true },
    });
    if (account) return account.user;
    const email = verifiedEmail(profile);
    const user =
      (await tx.user.findUnique({ where: { email } })) ??
      (await tx.user.create({ data: { name: displayName(profile, email), email, role: 'USER' } }));
    await tx.oAuthAccount.create({ data: { provider, subject: profile.subject, userId: user.id, email } });
    return user;
  });
}

const isUniqueViolation = (error: unknown) => error instanceof Prisma.PrismaClientKnownRequestError && error.code === 'P2002';

/** The user to log in. Two first logins racing (same sub, or same e-mail) collide on a unique index; the loser retries once and finds the winner's rows. */
export async function linkOrCreateUser(prisma: PrismaClient, provider: string, profile: OidcProfile) {
  try {
    return await resolve(prisma, provider, profile);
  } catch (error) {
    if (!isUniqueViolation(error)) throw error;
    return resolve(prisma, provider, profile);
  }
}
