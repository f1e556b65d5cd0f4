-- Issue 13 item 1: the first answer to a keyed write (Idempotency-Key), replayed to its retries until it expires.
CREATE TABLE "idempotency_records" (
    "scope" TEXT NOT NULL,
    "key" TEXT NOT NULL,
    "fingerprint" TEXT NOT NULL,
    "status" INTEGER,
    "headers" JSONB,
    "body" TEXT,
    "locked_until" TIMESTAMP(3) NOT NULL,
    "expires_at" TIMESTAMP(3) NOT NULL,
    "created_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "idempotency_records_pkey" PRIMARY KEY ("scope","key")
);

CREATE INDEX "idempotency_records_expires_at_idx" ON "idempotency_records"("expires_at");
