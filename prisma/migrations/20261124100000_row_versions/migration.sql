-- Issue 13 item 2: a version per row, the strong ETag of its representation and the token of optimistic concurrency
-- (If-Match; GraphQL `expectedVersion`). Bumped by the database on every UPDATE, whatever code path writes the row,
-- so no writer can forget it. Comments are never updated; they carry the column for one shape across resources.
ALTER TABLE "users" ADD COLUMN "version" INTEGER NOT NULL DEFAULT 1;
ALTER TABLE "posts" ADD COLUMN "version" INTEGER NOT NULL DEFAULT 1;
ALTER TABLE "comments" ADD COLUMN "version" INTEGER NOT NULL DEFAULT 1;
ALTER TABLE "orders" ADD COLUMN "version" INTEGER NOT NULL DEFAULT 1;

CREATE FUNCTION "bump_row_version"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW."version" := OLD."version" + 1;
  RETURN NEW;
END
$$;

CREATE TRIGGER "users_bump_version" BEFORE UPDATE ON "users" FOR EACH ROW EXECUTE FUNCTION "bump_row_version"();
CREATE TRIGGER "posts_bump_version" BEFORE UPDATE ON "posts" FOR EACH ROW EXECUTE FUNCTION "bump_row_version"();
CREATE TRIGGER "comments_bump_version" BEFORE UPDATE ON "comments" FOR EACH ROW EXECUTE FUNCTION "bump_row_version"();
CREATE TRIGGER "orders_bump_version" BEFORE UPDATE ON "orders" FOR EACH ROW EXECUTE FUNCTION "bump_row_version"();
