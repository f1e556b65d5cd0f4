-- Issue 39 item 4 (SPEC §0.1, §3.1): a validator identifies the representation sent. Anyone reads a user's public view
-- (e-mail "", no emailVerified); the user, ADMINs and signed requests read the view with the private fields. So:
--   - `version` and `updated_at` are the public view's validator: they move only when a public field changes, never
--     when the e-mail changes, is verified, or a credential moves (an anonymous observer would learn when it happened);
--   - `private_version` moves when a private column changes: the private view's ETag is both numbers
--     (rest/conditional.ts), so the owner sees a fresh e-mail, and the owner's If-Match covers it.
-- Columns of no representation and those of the private view only are named; a column added later counts as public
-- and moves the public version (the safe side: a validator that moves too often costs a 200, one that does not, a
-- stale or shared answer).
ALTER TABLE "users" ADD COLUMN     "private_version" INTEGER NOT NULL DEFAULT 1;

CREATE OR REPLACE FUNCTION "bump_user_version"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  -- Credentials and the validators themselves: in no representation.
  unshown CONSTANT text[] := ARRAY['token_version', 'password_hash', 'updated_at', 'version', 'private_version'];
  -- The private view's own columns (the contracts' `x-private` / `@private` fields: email, emailVerified).
  private_columns CONSTANT text[] := ARRAY['email', 'email_verified_at'];
BEGIN
  IF (to_jsonb(OLD) - unshown - private_columns) IS DISTINCT FROM (to_jsonb(NEW) - unshown - private_columns) THEN
    NEW."version" := OLD."version" + 1;
  ELSE
    -- Prisma's @updatedAt stamps every update: a change the public view does not show keeps its stamp as it was.
    NEW."version" := OLD."version";
    NEW."updated_at" := OLD."updated_at";
  END IF;
  -- private_columns, as a row: compared directly, without building two more JSON objects per update.
  IF (OLD."email", OLD."email_verified_at") IS DISTINCT FROM (NEW."email", NEW."email_verified_at") THEN
    NEW."private_version" := OLD."private_version" + 1;
  ELSE
    NEW."private_version" := OLD."private_version";
  END IF;
  RETURN NEW;
END
$$;
