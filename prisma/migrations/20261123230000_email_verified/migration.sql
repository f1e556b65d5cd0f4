-- Issue 10 item 1: when this service verified the user's e-mail (OpenID linking only trusts a verified address).
ALTER TABLE "users" ADD COLUMN "email_verified_at" TIMESTAMP(3);
