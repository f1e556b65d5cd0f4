-- CreateTable
CREATE TABLE "contract_usage" (
    "kind" TEXT NOT NULL,
    "coordinate" TEXT NOT NULL,
    "client" TEXT NOT NULL,
    "operation" TEXT NOT NULL DEFAULT '',
    "day" DATE NOT NULL,
    "requests" BIGINT NOT NULL DEFAULT 0,

    CONSTRAINT "contract_usage_pkey" PRIMARY KEY ("kind","coordinate","client","operation","day")
);

-- CreateIndex
CREATE INDEX "contract_usage_day_idx" ON "contract_usage"("day");
