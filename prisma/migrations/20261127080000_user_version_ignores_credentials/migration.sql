-- Issue 29 (SPEC §3.1): a user's version (its ETag) and updated_at are public, so they move only when a field of the
-- user's representation changes, never on a security event: logging out everywhere and refresh-token reuse bump
-- token_version, a password change writes password_hash, and anyone polling the ETag could watch them happen. The
-- columns that belong to no representation are named here; a column added later moves the version (the safe side).
CREATE FUNCTION "bump_user_version"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF (to_jsonb(OLD) - 'token_version' - 'password_hash' - 'updated_at' - 'version')
     IS DISTINCT FROM (to_jsonb(NEW) - 'token_version' - 'password_hash' - 'updated_at' - 'version') THEN
    NEW."version" := OLD."version" + 1;
  ELSE
    -- Prisma's @updatedAt stamps every update: a change of credentials only keeps the public stamp as it was.
    NEW."version" := OLD."version";
    NEW."updated_at" := OLD."updated_at";
  END IF;
  RETURN NEW;
END
$$;

DROP TRIGGER "users_bump_version" ON "users";
CREATE TRIGGER "users_bump_version" BEFORE UPDATE ON "users" FOR EACH ROW EXECUTE FUNCTION "bump_user_version"();
