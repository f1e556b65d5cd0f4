-- Review of issue 13: (1) a claim token per idempotency record, so a run whose lease was taken over cannot record or
-- release the key of the run that took it; (2) an UPDATE that changes nothing keeps the row's version (an order
-- cancelled twice kept the same representation but got a new ETag, failing If-Match writes made from it).
ALTER TABLE "idempotency_records" ADD COLUMN "claim" TEXT NOT NULL DEFAULT '';
ALTER TABLE "idempotency_records" ALTER COLUMN "claim" DROP DEFAULT;

DROP TRIGGER "users_bump_version" ON "users";
DROP TRIGGER "posts_bump_version" ON "posts";
DROP TRIGGER "comments_bump_version" ON "comments";
DROP TRIGGER "orders_bump_version" ON "orders";
CREATE TRIGGER "users_bump_version" BEFORE UPDATE ON "users" FOR EACH ROW WHEN (OLD.* IS DISTINCT FROM NEW.*) EXECUTE FUNCTION "bump_row_version"();
CREATE TRIGGER "posts_bump_version" BEFORE UPDATE ON "posts" FOR EACH ROW WHEN (OLD.* IS DISTINCT FROM NEW.*) EXECUTE FUNCTION "bump_row_version"();
CREATE TRIGGER "comments_bump_version" BEFORE UPDATE ON "comments" FOR EACH ROW WHEN (OLD.* IS DISTINCT FROM NEW.*) EXECUTE FUNCTION "bump_row_version"();
CREATE TRIGGER "orders_bump_version" BEFORE UPDATE ON "orders" FOR EACH ROW WHEN (OLD.* IS DISTINCT FROM NEW.*) EXECUTE FUNCTION "bump_row_version"();
