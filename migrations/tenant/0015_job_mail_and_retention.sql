-- Jobs follow-ups (issue 14 point 5): completion emails, retention of finished jobs, and one development sink
-- for every outgoing message. Expand-only.

-- The development sink keeps an email as sent: its sender and, when it has one, its HTML part (organization
-- invitations), beside the plain text in `body`.
ALTER TABLE dev_messages ADD COLUMN sender TEXT;
ALTER TABLE dev_messages ADD COLUMN html TEXT;

-- Finished jobs (completed or failed) expire JOB_RETENTION_MS after they finished; the alarm's job lane
-- finds the oldest in one index step and deletes them (rows, errors, export lines) in bounded batches.
CREATE INDEX jobs_finished ON jobs (completed_at) WHERE completed_at IS NOT NULL;
