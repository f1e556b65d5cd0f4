-- Account lifecycle (SPEC §3.2): every sign-in is a row of "sessions" (cookie sessions, and now refresh-token
-- families too), with a public id (the access tokens' `sid`), its login time (`auth_time`) and its last use; and the
-- single-use tokens mailed for password resets and e-mail verification. Existing sign-ins are carried over.

-- CreateEnum
CREATE TYPE "SignInKind" AS ENUM ('tokens', 'cookie');

-- CreateEnum
CREATE TYPE "AccountTokenPurpose" AS ENUM ('password_reset', 'email_verification');

-- DropIndex
DROP INDEX "sessions_user_id_idx";

-- AlterTable: a cookie session's id was the hash of its secret; the hash moves to secret_hash, the id becomes random.
ALTER TABLE "sessions" ADD COLUMN     "auth_time" TIMESTAMP(3),
ADD COLUMN     "kind" "SignInKind" NOT NULL DEFAULT 'cookie',
ADD COLUMN     "last_used_at" TIMESTAMP(3),
ADD COLUMN     "secret_hash" TEXT,
ADD COLUMN     "user_agent" TEXT;
UPDATE "sessions" SET "secret_hash" = "id", "id" = gen_random_uuid()::text, "auth_time" = "created_at", "last_used_at" = "created_at";

-- Each live refresh-token family becomes a sign-in of kind `tokens` under its family id; the tokens of families
-- that are revoked or expired (which could never be used again) are dropped.
DELETE FROM "refresh_tokens" r
 WHERE NOT EXISTS (SELECT 1 FROM "refresh_tokens" live
                    WHERE live."family_id" = r."family_id" AND live."revoked_at" IS NULL AND live."expires_at" > CURRENT_TIMESTAMP);
INSERT INTO "sessions" ("id", "user_id", "kind", "auth_time", "created_at", "last_used_at", "expires_at")
SELECT "family_id", min("user_id"), 'tokens', min("created_at"), min("created_at"), max("created_at"), max("expires_at")
  FROM "refresh_tokens" GROUP BY "family_id";

ALTER TABLE "sessions" ALTER COLUMN "auth_time" SET NOT NULL,
ALTER COLUMN "last_used_at" SET NOT NULL,
ALTER COLUMN "kind" DROP DEFAULT;

-- CreateTable
CREATE TABLE "account_tokens" (
    "id" SERIAL NOT NULL,
    "user_id" INTEGER NOT NULL,
    "purpose" "AccountTokenPurpose" NOT NULL,
    "token_hash" TEXT NOT NULL,
    "email" TEXT NOT NULL,
    "expires_at" TIMESTAMP(3) NOT NULL,
    "created_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "account_tokens_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "account_tokens_token_hash_key" ON "account_tokens"("token_hash");

-- CreateIndex
CREATE INDEX "account_tokens_user_id_purpose_idx" ON "account_tokens"("user_id", "purpose");

-- CreateIndex
CREATE UNIQUE INDEX "sessions_secret_hash_key" ON "sessions"("secret_hash");

-- CreateIndex
CREATE INDEX "sessions_user_id_created_at_idx" ON "sessions"("user_id", "created_at");

-- AddForeignKey
ALTER TABLE "refresh_tokens" ADD CONSTRAINT "refresh_tokens_family_id_fkey" FOREIGN KEY ("family_id") REFERENCES "sessions"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "account_tokens" ADD CONSTRAINT "account_tokens_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE CASCADE ON UPDATE CASCADE;
