-- Refresh-token metadata (the reference platform's `refresh_token_metadata`): up to 25 string values set
-- through PATCH /api/v2/refresh-tokens/{id}, as a JSON object ('{}' when unset). Every row of a family
-- carries the same object, and each rotation copies it to the successor.
ALTER TABLE refresh_tokens ADD COLUMN metadata TEXT NOT NULL DEFAULT '{}';
