-- Bulk user import and export jobs (issue 14 point 5, SPEC §4.2 "Failed events and jobs").
-- A job's rows are staged here before POST /jobs/users-imports answers; the alarm's job lane then
-- processes them in chunks, each chunk committing its users, its row errors and the job's progress
-- (next_row, counters) in one transaction, so a crash loses at most the chunk in flight.
CREATE TABLE jobs (
  id TEXT PRIMARY KEY,
  type TEXT NOT NULL,                       -- users_import | users_export
  status TEXT NOT NULL,                     -- pending | processing | completed | failed
  connection_id TEXT,
  connection TEXT,                          -- the connection's name when the job was created
  external_id TEXT,
  upsert INTEGER NOT NULL DEFAULT 0,
  send_completion_email INTEGER NOT NULL DEFAULT 0,
  format TEXT,                              -- exports: json | csv
  row_limit INTEGER,                        -- exports: at most this many users
  fields TEXT,                              -- exports: JSON [{name, export_as}]
  total INTEGER NOT NULL DEFAULT 0,         -- imports: staged rows; exports: lines written so far
  next_row INTEGER NOT NULL DEFAULT 0,      -- imports: the first row not yet committed
  cursor TEXT,                              -- exports: the last user id written
  inserted INTEGER NOT NULL DEFAULT 0,
  updated INTEGER NOT NULL DEFAULT 0,
  failed INTEGER NOT NULL DEFAULT 0,
  attempts INTEGER NOT NULL DEFAULT 0,      -- chunk runs started at next_row (reset when it advances)
  status_details TEXT,
  audit TEXT NOT NULL DEFAULT '{}',         -- the creator's audit context, recorded with every chunk event
  last_run_at INTEGER,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  completed_at INTEGER
);
CREATE INDEX jobs_active ON jobs (last_run_at) WHERE status IN ('pending', 'processing');

-- Imports: the staged file, one JSON row each. Exports: the output lines.
CREATE TABLE job_rows (
  job_id TEXT NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
  idx INTEGER NOT NULL,
  data TEXT NOT NULL,
  PRIMARY KEY (job_id, idx)
) WITHOUT ROWID;

-- Per-row import failures: the row as given (hashes removed) and its errors [{code, message, path}].
CREATE TABLE job_errors (
  job_id TEXT NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
  idx INTEGER NOT NULL,
  user TEXT NOT NULL,
  errors TEXT NOT NULL,
  PRIMARY KEY (job_id, idx)
) WITHOUT ROWID;
