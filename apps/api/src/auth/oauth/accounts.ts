// Which user an OpenID Connect login is: the account linked to (provider, sub); else, for a provider-verified e-mail,
// the existing account with it only when this service verified that address and the account is a USER; else a new
// USER, made by the rules of every sign-up. Any other existing account is linked only by its signed-in owner (the
// authenticated link flow, links.ts), never here.
import { Prisma, type PrismaClient, type User } from '@users-posts/db';
import { AppError } from '../../errors/app-error.js';
import { loadOpenapi } from '../../contract/openapi-contract.js';
import type { OidcProfile } from './flow.js';

/** A new account's fields from a profile: what sign-up takes (the contract's CreateUserInput, without a password). */
export interface OAuthSignUp {
  name: string;
  email: string;
}

/**
 * What a first OpenID login passes before it makes an account, as every sign-up does (SPEC §0.1, §4), handed in by the
 * door: the contract's compiled rules and the client's sign-up bucket live above this floor.
 */
export interface SignUpRules {
  /** The contract's CreateUserInput, as REST and GraphQL sign-up check it; throws VALIDATION_FAILED naming each field. */
  validate(input: OAuthSignUp): void;
  /** Uses up one account of the client address's sign-up bucket, or throws RATE_LIMITED: called before the account is written. */
  admit(): Promise<void>;
}

/** The contract's bound on a user's name (`UserName.maxLength` in openapi.yaml), read there rather than restated. */
function nameMaxLength(): number {
  const { schemas } = loadOpenapi().document.components as { schemas: Record<string, { maxLength?: number }> };
  return schemas.UserName?.maxLength ?? Number.POSITIVE_INFINITY;
}

const graphemes = new Intl.Segmenter('und', { granularity: 'grapheme' });

/**
 * `text` cut after the last whole grapheme (a character as a reader sees it: a surrogate pair, a base with its combining
 * marks, an emoji sequence) that keeps it within `max` code points, the unit the contract's maxLength counts.
 */
export function cutAtGrapheme(text: string, max: number): string {
  let kept = '';
  let length = 0;
  for (const { segment } of graphemes.segment(text)) {
    const size = [...segment].length;
    if (length + size > max) break;
    kept += segment;
    length += size;
  }
  return kept.trimEnd();
}

/**
 * The new account's fields, with the one normalisation of a profile (documented on the callback in openapi.yaml): a
 * `name` claim longer than the contract allows is cut at a grapheme boundary, never inside a character. Without a name
 * claim, the e-mail's local part. The e-mail is taken as asserted: no folding of look-alike or fullwidth characters,
 * which would point one person's verified address at another's account. The contract then judges both, as for sign-up.
 */
export function signUpFields(profile: OidcProfile, email: string): OAuthSignUp {
  const name = profile.name ?? email.slice(0, email.lastIndexOf('@'));
  return { name: cutAtGrapheme(name, nameMaxLength()), email };
}

/**
 * Only an e-mail the provider vouches for may select or create a user: an unverified one would let anyone who can
 * type another person's address at some provider log in as that person here.
 */
function verifiedEmail(profile: OidcProfile): string {
  if (!profile.email || !profile.emailVerified) {
    throw new AppError('UNAUTHENTICATED', 'The identity provider did not confirm a verified e-mail address');
  }
  return profile.email;
}

/** The profile judged by the sign-up rules: refused (422 naming `email` or `name`) as REST sign-up would refuse it. */
function checkedSignUp(profile: OidcProfile, rules: SignUpRules): OAuthSignUp {
  const input = signUpFields(profile, verifiedEmail(profile));
  try {
    rules.validate(input);
  } catch (error) {
    if (!(error instanceof AppError) || error.status !== 422) throw error;
    throw new AppError('VALIDATION_FAILED', "The identity provider's profile does not meet this service's rules for an account", error.fields);
  }
  return input;
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

async function resolve(prisma: PrismaClient, provider: string, profile: OidcProfile, rules: SignUpRules): Promise<User> {
  return prisma.$transaction(async (tx) => {
    const account = await tx.oAuthAccount.findUnique({
      where: { provider_subject: { provider, subject: profile.subject } },
      include: { user: true },
    });
    if (account) return account.user;
    // Judged before the lookup too: an address the contract refuses can belong to no account here.
    const input = checkedSignUp(profile, rules);
    const email = input.email.toLowerCase();
    const existing = await tx.user.findUnique({ where: { email } });
    if (existing && !autoLinkable(existing)) throw linkRefused(provider);
    let user = existing;
    if (!user) {
      await rules.admit();
      // A new account's address is verified by the very login that creates it.
      user = await tx.user.create({ data: { name: input.name, email, role: 'USER', emailVerifiedAt: new Date() } });
    }
    await tx.oAuthAccount.create({ data: { provider, subject: profile.subject, userId: user.id, email } });
    return user;
  });
}

const isUniqueViolation = (error: unknown) => error instanceof Prisma.PrismaClientKnownRequestError && error.code === 'P2002';

/**
 * The user to log in. Two first logins racing (same sub, or same e-mail) collide on a unique index; the loser retries
 * once and finds the winner's rows (its use of the sign-up bucket stays counted: the bucket errs on the safe side).
 */
export async function linkOrCreateUser(prisma: PrismaClient, provider: string, profile: OidcProfile, rules: SignUpRules): Promise<User> {
  try {
    return await resolve(prisma, provider, profile, rules);
  } catch (error) {
    if (!isUniqueViolation(error)) throw error;
    return resolve(prisma, provider, profile, rules);
  }
}
