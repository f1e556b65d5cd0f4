// The account lifecycle's mail (SPEC §3.2), each with a plain-text and an HTML body. Links carry their token in the
// fragment (`#token=`): a fragment is never sent to a server, so the token stays out of access logs and Referer headers;
// the page at PUBLIC_URL reads it and posts it to the API.
import escapeHtml from 'escape-html';
import type { MailMessage } from './mailer.js';

/** A link to the front end's `page` carrying `token`. */
export const tokenLink = (publicUrl: string, page: 'reset-password' | 'verify-email', token: string) => `${publicUrl}/${page}#token=${token}`;

/**
 * `text` broken at spaces into lines of at most 76 characters. Mail whose every line is that short goes out as it is
 * (7bit) instead of quoted-printable, which would cut a link's token with soft line breaks: whoever reads an `.eml`
 * of the outbox (the README's tour) finds the token whole. By hand: eight lines, no dependency needed.
 */
function wrap(text: string, width = 76): string {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(' ')) {
    if (line && line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else line = line ? `${line} ${word}` : word;
  }
  return [...lines, line].join('\n');
}

function message(to: string, subject: string, paragraphs: string[], link?: { href: string; label: string }): MailMessage {
  // The link on a line of its own in both bodies (its token, 22 characters, keeps that line short).
  const text = [...paragraphs.map((paragraph) => wrap(paragraph)), ...(link ? [`${link.label}:\n${link.href}`] : [])].join('\n\n');
  const body = paragraphs.map((paragraph) => `<p>${wrap(escapeHtml(paragraph), 68)}</p>`);
  if (link) body.push(`<p><a\nhref="${escapeHtml(link.href)}">\n${escapeHtml(link.label)}</a></p>`);
  const html = `<!doctype html>\n<html><body>\n${body.join('\n')}\n</body></html>\n`;
  return { to, subject, text: `${text}\n`, html };
}

export const passwordResetMessage = (to: string, link: string): MailMessage =>
  message(
    to,
    'Reset your password',
    [
      'Someone asked to reset the password of the account with this e-mail address.',
      'The link below is valid for 30 minutes and works once. If it was not you, ignore this message: your password stays as it is.',
    ],
    { href: link, label: 'Choose a new password' },
  );

/**
 * A reset asked for an address no account has. Sent rather than nothing (issue 46): a message composed and sent holds
 * a delivery slot as long for an address with an account as without, so the time the asker's own mail takes tells
 * nothing of whether this one has an account. No link: there is nothing to reset.
 */
export const resetWithoutAccountMessage = (to: string): MailMessage =>
  message(to, 'Password reset requested', [
    'Someone asked to reset the password of an account with this e-mail address, but no account uses this address.',
    'If it was you, you may have signed up with another address. If it was not you, ignore this message: nothing was changed.',
  ]);

export const verificationMessage = (to: string, link: string): MailMessage =>
  message(
    to,
    'Confirm your e-mail address',
    ['Please confirm that this address belongs to your account.', 'The link below is valid for 24 hours and works once.'],
    { href: link, label: 'Confirm this address' },
  );

export const emailChangedNotice = (to: string): MailMessage =>
  message(to, 'The e-mail address of your account was changed', [
    'The e-mail address of the account that used this address was just changed, and this address no longer signs in to it.',
    'If you did not make this change, contact the administrator of this service at once.',
  ]);

/** SPEC §3.3: the per-account login guard refused an address; the link lets the address it is opened from in. */
export const addressTrustMessage = (to: string, link: string): MailMessage =>
  message(
    to,
    'A login to your account from a new address',
    [
      'Someone tried to log in to the account with this e-mail address from an address it was not used from, while that account is protected against repeated failed logins.',
      'If it was you: open the link below on the device you are logging in from, then log in again with your password. The link works once, for one hour, and lets in only the address it is opened from; it does not log anyone in by itself.',
      'If it was not you, ignore this message; consider changing your password if you think it may be known.',
    ],
    { href: link, label: 'Let this device log in' },
  );

/** The guard refused a login for an address no account has: told, for the same reason as resetWithoutAccountMessage. */
export const addressTrustWithoutAccountMessage = (to: string): MailMessage =>
  message(to, 'Repeated logins with this e-mail address', [
    'Someone tried many times to log in with this e-mail address, but no account uses this address, so nothing is at risk.',
    'You need not do anything; ignore this message.',
  ]);
