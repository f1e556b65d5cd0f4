-- SPEC §0.1: the database's own constraints agree with the contract's bounds. An API key's name is 1–100 characters in
-- openapi.yaml (CreateApiKeyInput.name); the column had no bound of its own (`pnpm contracts:check` compares them).
ALTER TABLE "api_keys" ADD CONSTRAINT "api_keys_name_length" CHECK (char_length("name") BETWEEN 1 AND 100);
