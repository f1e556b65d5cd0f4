// Which user an OpenID Connect login is: the account linked to (provider, sub); else, for a provider-verified e-mail,
// the existing account with it only when this service verified that address and the account is a USER; else a new
// USER. Any other existing account is linked only by its signed-in owner (the authenticated link flow), never here.
import { Prisma, type PrismaClient, type User } from '@users-posts/db';
import { AppError } from '../../errors/app-error.js';
import type { OidcProfile } from './flow.js';

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

/** The path a signed-in owner opens to link this provider to their account (documented in openapi.yaml). */
export const linkPath = (provider: string) => `/auth/oauth/${provider}/authorize?link=true`;

/**
 * Whether a new identity may be attached to `user` without its owner asking. Anyone can sign up with, or change their
 * e-mail to, someone else's address (nothing here sends mail), so an unverified address proves nothing about who owns
 * the account; and a privileged account is never taken over by whoever controls an address at some provider.
 */
const autoLinkable = (user: User) => user.emailVerifiedAt !== null && user.role === 'USER';

function linkRefused(provider: string): AppError {
  return new AppError(
    'CONFLICT',
    `An account with this e-mail already exists and cannot be linked automatically. Sign in to that account, then open GET ${linkPath(provider)} to link this ${provider} login to it`,
  );
}

async function resolve(prisma: PrismaClient, provider: string, profile: OidcProfile): Promise<User> {
  return prisma.$transaction(async (tx) => {
    const account = await tx.oAuthAccount.findUnique({
      where: { provider_subject: { provider, subject: profile.subject } },
      include: { user: true },
    });
    if (account) return account.user;
    const email = verifiedEmail(profile);
    const existing = await tx.user.findUnique({ where: { email } });
    if (existing && !autoLinkable(existing)) throw linkRefused(provider);
    // A new account's address is verified by the very login that creates it.
    const user =
      existing ?? (await tx.user.create({ data: { name: displayName(profile, email), email, role: 'USER', emailVerifiedAt: new Date() } }));
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

/**
 * The authenticated link flow: attaches (provider, sub) to `userId`, the user who was signed in when the link was
 * asked for (recorded in the signed OAuth transaction) — never to anyone else. 409 when the identity is linked to
 * another user already. When the provider verified the account's own address, this service now knows it verified.
 */
export async function linkToUser(prisma: PrismaClient, provider: string, profile: OidcProfile, userId: number): Promise<User> {
  const link = () =>
    prisma.$transaction(async (tx) => {
      const user = await tx.user.findUnique({ where: { id: userId } });
      if (!user) throw new AppError('UNAUTHENTICATED', 'The account that asked for this link no longer exists');
      const account = await tx.oAuthAccount.findUnique({ where: { provider_subject: { provider, subject: profile.subject } } });
      if (account && account.userId !== userId) {
        throw new AppError('CONFLICT', `This ${provider} login is already linked to another account`);
      }
      const email = profile.email?.toLowerCase();
      if (!account) await tx.oAuthAccount.create({ data: { provider, subject: profile.subject, userId, email: email ?? null } });
      if (profile.emailVerified && email === user.email && !user.emailVerifiedAt) {
        return tx.user.update({ where: { id: userId }, data: { emailVerifiedAt: new Date() } });
      }
      return user;
    });
  try {
    return await link();
  } catch (error) {
    if (!isUniqueViolation(error)) throw error;
    return link(); // a concurrent link of the same identity: the retry sees its row
  }
}
