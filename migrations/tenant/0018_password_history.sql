-- Password history (issue 29 point 1): the bcrypt hashes a database user had before a password reset, kept
-- while the user's connection enables `password_history` (the reference platform's option, `size` at most
-- 24), so a reset can refuse a recent password. Rows go with their user. Expand-only.
CREATE TABLE password_history (
  user_id TEXT NOT NULL,
  password_hash TEXT NOT NULL,
  created_at INTEGER NOT NULL
);
CREATE INDEX password_history_by_user ON password_history (user_id, created_at DESC);
CREATE TRIGGER password_history_user_deleted AFTER DELETE ON users BEGIN
  DELETE FROM password_history WHERE user_id = OLD.user_id;
END;
