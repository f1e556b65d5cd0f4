-- AlterTable
-- `sender` is added with a default only to fill the rows already waiting (each one's old partition: its account, else
-- its address), then the default is dropped: every new row names its sender (mail/outbox.ts).
ALTER TABLE "mail_outbox" ADD COLUMN     "priority" SMALLINT NOT NULL DEFAULT 1,
ADD COLUMN     "sender" CHAR(64) NOT NULL DEFAULT '',
ADD COLUMN     "turn" INTEGER NOT NULL DEFAULT 1;

UPDATE "mail_outbox" SET "sender" = encode(sha256(convert_to(coalesce('account:' || "user_id", 'address:' || "recipient"), 'UTF8')), 'hex');

ALTER TABLE "mail_outbox" ALTER COLUMN "sender" DROP DEFAULT;

-- CreateIndex
CREATE INDEX "mail_outbox_status_turn_priority_id_idx" ON "mail_outbox"("status", "turn", "priority", "id");

-- CreateIndex
CREATE INDEX "mail_outbox_sender_status_idx" ON "mail_outbox"("sender", "status");

-- A digest of fixed size (never what a client sent), a known priority, a turn from 1: what the claims' order relies on.
ALTER TABLE "mail_outbox" ADD CONSTRAINT "mail_outbox_sender_check" CHECK ("sender" ~ '^[0-9a-f]{64}$');
ALTER TABLE "mail_outbox" ADD CONSTRAINT "mail_outbox_priority_check" CHECK ("priority" IN (0, 1));
ALTER TABLE "mail_outbox" ADD CONSTRAINT "mail_outbox_turn_check" CHECK ("turn" >= 1);
