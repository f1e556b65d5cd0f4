-- CreateTable
CREATE TABLE "mail_outbox" (
    "id" SERIAL NOT NULL,
    "kind" TEXT NOT NULL,
    "recipient" TEXT NOT NULL,
    "user_id" INTEGER,
    "payload" JSONB,
    "status" TEXT NOT NULL DEFAULT 'pending',
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "next_attempt_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "created_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "mail_outbox_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "mail_outbox_status_next_attempt_at_idx" ON "mail_outbox"("status", "next_attempt_at");

-- CreateIndex
CREATE INDEX "mail_outbox_recipient_kind_created_at_idx" ON "mail_outbox"("recipient", "kind", "created_at");

-- CreateIndex
CREATE INDEX "mail_outbox_user_id_kind_created_at_idx" ON "mail_outbox"("user_id", "kind", "created_at");

-- The worker's states (mail/outbox.ts): a typo in a status would leave a row that no query ever picks up again.
ALTER TABLE "mail_outbox" ADD CONSTRAINT "mail_outbox_status_check" CHECK ("status" IN ('pending', 'sent', 'skipped', 'failed'));
