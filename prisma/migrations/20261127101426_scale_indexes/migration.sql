-- Issue 32 (SPEC §4 "At scale"): an index path for every listing, sort, filter and search of the contract, and row
-- counts kept by the writes, so that no request scans a table at a million rows.
--
-- Plain CREATE INDEX: PostgreSQL refuses CONCURRENTLY inside the transaction a multi-statement migration runs in, and
-- Prisma applies a migration as one script. The builds take a SHARE lock (reads go on, writes wait) for as long as
-- they run: measured in docs/benchmarks.md ("Index builds"). On a large live database, create the same indexes first
-- with CREATE INDEX CONCURRENTLY under the same names (docs/operations.md); the statements below then find them.

-- CreateExtension
CREATE EXTENSION IF NOT EXISTS "pg_trgm";

-- CreateTable
CREATE TABLE "row_counts" (
    "table_name" TEXT NOT NULL,
    "slot" SMALLINT NOT NULL,
    "rows" BIGINT NOT NULL DEFAULT 0,

    CONSTRAINT "row_counts_pkey" PRIMARY KEY ("table_name","slot")
);

-- CreateIndex
CREATE INDEX IF NOT EXISTS "comments_created_at_id_idx" ON "comments"("created_at", "id");

-- CreateIndex
CREATE INDEX IF NOT EXISTS "comments_body_trgm_idx" ON "comments" USING GIN ("body" gin_trgm_ops);

-- CreateIndex
CREATE INDEX IF NOT EXISTS "posts_author_id_id_idx" ON "posts"("author_id", "id");

-- CreateIndex
CREATE INDEX IF NOT EXISTS "posts_title_id_idx" ON "posts"("title", "id");

-- CreateIndex
CREATE INDEX IF NOT EXISTS "posts_title_trgm_idx" ON "posts" USING GIN ("title" gin_trgm_ops);

-- CreateIndex
CREATE INDEX IF NOT EXISTS "posts_content_trgm_idx" ON "posts" USING GIN ("content" gin_trgm_ops);

-- CreateIndex
CREATE INDEX IF NOT EXISTS "users_name_id_idx" ON "users"("name", "id");

-- CreateIndex
CREATE INDEX IF NOT EXISTS "users_age_id_idx" ON "users"("age", "id");

-- CreateIndex
CREATE INDEX IF NOT EXISTS "users_age_desc_id_idx" ON "users"("age" DESC NULLS LAST, "id" DESC);

-- CreateIndex
CREATE INDEX IF NOT EXISTS "users_created_at_id_idx" ON "users"("created_at", "id");

-- CreateIndex
CREATE INDEX IF NOT EXISTS "users_role_id_idx" ON "users"("role", "id");

-- CreateIndex
CREATE INDEX IF NOT EXISTS "users_name_trgm_idx" ON "users" USING GIN ("name" gin_trgm_ops);

-- CreateIndex
CREATE INDEX IF NOT EXISTS "users_email_trgm_idx" ON "users" USING GIN ("email" gin_trgm_ops);

-- An author's posts in id order are served by ("author_id", "id") above: the single-column index is redundant.
DROP INDEX "posts_author_id_idx";

-- Row counts (model RowCount): 16 slots per table, each writer adding to the slot of its connection.
INSERT INTO "row_counts" ("table_name", "slot", "rows")
SELECT counted.table_name, slot, CASE WHEN slot = 0 THEN counted.rows ELSE 0 END
FROM (SELECT 'users' AS table_name, count(*) AS rows FROM "users" UNION ALL SELECT 'posts', count(*) FROM "posts") AS counted
CROSS JOIN generate_series(0, 15) AS slot;

CREATE FUNCTION "count_rows"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  delta bigint;
BEGIN
  IF TG_OP = 'TRUNCATE' THEN
    UPDATE "row_counts" SET "rows" = 0 WHERE "table_name" = TG_TABLE_NAME;
    RETURN NULL;
  ELSIF TG_OP = 'INSERT' THEN
    SELECT count(*) INTO delta FROM added;
  ELSE
    SELECT -count(*) INTO delta FROM removed;
  END IF;
  IF delta <> 0 THEN
    UPDATE "row_counts" SET "rows" = "rows" + delta WHERE "table_name" = TG_TABLE_NAME AND "slot" = pg_backend_pid() % 16;
  END IF;
  RETURN NULL;
END
$$;

CREATE TRIGGER "users_count_inserts" AFTER INSERT ON "users" REFERENCING NEW TABLE AS added FOR EACH STATEMENT EXECUTE FUNCTION "count_rows"();
CREATE TRIGGER "users_count_deletes" AFTER DELETE ON "users" REFERENCING OLD TABLE AS removed FOR EACH STATEMENT EXECUTE FUNCTION "count_rows"();
CREATE TRIGGER "users_count_truncate" AFTER TRUNCATE ON "users" FOR EACH STATEMENT EXECUTE FUNCTION "count_rows"();
CREATE TRIGGER "posts_count_inserts" AFTER INSERT ON "posts" REFERENCING NEW TABLE AS added FOR EACH STATEMENT EXECUTE FUNCTION "count_rows"();
CREATE TRIGGER "posts_count_deletes" AFTER DELETE ON "posts" REFERENCING OLD TABLE AS removed FOR EACH STATEMENT EXECUTE FUNCTION "count_rows"();
CREATE TRIGGER "posts_count_truncate" AFTER TRUNCATE ON "posts" FOR EACH STATEMENT EXECUTE FUNCTION "count_rows"();
