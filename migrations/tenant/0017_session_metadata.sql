-- Session metadata (the reference platform's `session_metadata`: at most 25 string properties, set with
-- PATCH /api/v2/sessions/{id}), as a JSON object. Sessions from before this migration have none. Expand-only.
ALTER TABLE sessions ADD COLUMN session_metadata TEXT NOT NULL DEFAULT '{}';
