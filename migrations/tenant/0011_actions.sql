-- Actions (issue 13, SPEC §6.1-6.2): tenant code hooks, their immutable versions, trigger bindings and
-- execution records; log streams (SPEC §2.10). Times are integer epoch milliseconds.

-- The draft of an action. Secret values live only in secrets_enc (AES-GCM, context action_secrets:<id>).
CREATE TABLE actions (
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL UNIQUE,
  supported_triggers TEXT NOT NULL,
  code TEXT NOT NULL DEFAULT '',
  runtime TEXT NOT NULL,
  dependencies TEXT NOT NULL DEFAULT '[]',
  secret_names TEXT NOT NULL DEFAULT '[]',
  secrets_enc TEXT,
  deployed_version_id TEXT,
  all_changes_deployed INTEGER NOT NULL DEFAULT 0,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);

-- A deployed snapshot: the source as written, the instrumented module the sandbox loads, the secrets.
CREATE TABLE action_versions (
  id TEXT PRIMARY KEY,
  action_id TEXT NOT NULL REFERENCES actions (id) ON DELETE CASCADE,
  number INTEGER NOT NULL,
  code TEXT NOT NULL,
  compiled TEXT NOT NULL,
  runtime TEXT NOT NULL,
  dependencies TEXT NOT NULL DEFAULT '[]',
  secret_names TEXT NOT NULL DEFAULT '[]',
  secrets_enc TEXT,
  supported_triggers TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  UNIQUE (action_id, number)
);

-- Ordered bindings of deployed actions to triggers; each runs its action's deployed version.
CREATE TABLE action_bindings (
  id TEXT PRIMARY KEY,
  trigger_id TEXT NOT NULL,
  action_id TEXT NOT NULL REFERENCES actions (id) ON DELETE CASCADE,
  display_name TEXT NOT NULL,
  position INTEGER NOT NULL,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);
CREATE INDEX action_bindings_by_trigger ON action_bindings (trigger_id, position);

-- One row per dispatch of a trigger (results per action), kept for the retention window.
CREATE TABLE action_executions (
  id TEXT PRIMARY KEY,
  trigger_id TEXT NOT NULL,
  status TEXT NOT NULL,
  results TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);
CREATE INDEX action_executions_by_time ON action_executions (created_at);

-- Log streams: each reads the logs table after its own cursor (at-least-once, in order); credentials
-- (the authorization header) only in sink_enc. failing_since starts the suspension clock.
CREATE TABLE log_streams (
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL,
  type TEXT NOT NULL,
  status TEXT NOT NULL DEFAULT 'active',
  sink TEXT NOT NULL,
  sink_enc TEXT,
  filters TEXT NOT NULL DEFAULT '[]',
  is_priority INTEGER NOT NULL DEFAULT 0,
  cursor_date INTEGER NOT NULL DEFAULT 0,
  cursor_id TEXT NOT NULL DEFAULT '',
  next_attempt_at INTEGER,
  attempts INTEGER NOT NULL DEFAULT 0,
  failing_since INTEGER,
  last_error TEXT,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);

-- Template hooks (SPEC §6.2): a hook that runs built-in code (`account-linking`) instead of POSTing to a url.
ALTER TABLE hooks ADD COLUMN template_id TEXT;
