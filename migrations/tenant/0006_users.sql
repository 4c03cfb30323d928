-- Issue 9: users at the reference platform's fidelity (SPEC §2.12, §4.2 "Users"). Times are epoch ms.
--
-- The users table is rebuilt with an integer key (`seq`) so the trigram index below can address rows by a
-- stable rowid: the implicit rowid of a table keyed by TEXT may change when SQLite rebuilds the table.
-- Every existing row is copied with its columns, so users who signed up before this migration keep working.
CREATE TABLE users_v6 (
  seq INTEGER PRIMARY KEY,
  user_id TEXT NOT NULL UNIQUE,
  connection TEXT NOT NULL,
  email TEXT,
  -- The reference platform's searchable `email.domain`.
  email_domain TEXT GENERATED ALWAYS AS (CASE WHEN instr(email, '@') > 0 THEN substr(email, instr(email, '@') + 1) END) VIRTUAL,
  email_verified INTEGER NOT NULL DEFAULT 0,
  username TEXT,
  phone_number TEXT,
  phone_verified INTEGER NOT NULL DEFAULT 0,
  password_hash TEXT,
  name TEXT,
  given_name TEXT,
  family_name TEXT,
  nickname TEXT,
  picture TEXT,
  blocked INTEGER NOT NULL DEFAULT 0,
  app_metadata TEXT NOT NULL DEFAULT '{}',
  user_metadata TEXT NOT NULL DEFAULT '{}',
  last_login INTEGER,
  last_ip TEXT,
  logins_count INTEGER NOT NULL DEFAULT 0,
  -- The primary user this account is linked to (SPEC §2.12); NULL for a primary (or unlinked) user.
  linked_to TEXT,
  registration_completed_at INTEGER,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);
INSERT INTO users_v6 (user_id, connection, email, email_verified, password_hash, name, nickname, picture, blocked,
    app_metadata, user_metadata, last_login, logins_count, registration_completed_at, created_at, updated_at)
  SELECT user_id, connection, email, email_verified, password_hash, name, nickname, picture, blocked,
    app_metadata, user_metadata, last_login, logins_count, registration_completed_at, created_at, updated_at
  FROM users ORDER BY created_at, user_id;
DROP TABLE users;
ALTER TABLE users_v6 RENAME TO users;

-- Email equality per connection (login, duplicate check) and across connections (users-by-email, `q`).
CREATE UNIQUE INDEX users_by_connection_email ON users (connection, email);
CREATE INDEX users_by_email ON users (email);
CREATE INDEX users_by_email_domain ON users (email_domain);
CREATE UNIQUE INDEX users_by_connection_username ON users (connection, username) WHERE username IS NOT NULL;
-- Keyset listing (SPEC §4.3: created_at, then user_id) over primary users only; secondaries by primary.
CREATE INDEX users_by_created ON users (created_at, user_id) WHERE linked_to IS NULL;
CREATE INDEX users_by_linked_to ON users (linked_to) WHERE linked_to IS NOT NULL;

-- One identity per account (SPEC §2.12): `user_id` is the primary user that shows it (the account itself
-- until it is linked), `source_user_id` the account it is, `identity_user_id` the bare id (no provider
-- prefix; pipes inside the id are kept). Kept in step with `users` by the triggers below.
CREATE TABLE identities (
  source_user_id TEXT PRIMARY KEY,
  user_id TEXT NOT NULL,
  provider TEXT NOT NULL,
  connection TEXT NOT NULL,
  identity_user_id TEXT NOT NULL,
  -- When the identity joined its user: the account's creation, or the moment it was linked (list order).
  linked_at INTEGER NOT NULL
);
CREATE INDEX identities_by_user ON identities (user_id);
CREATE INDEX identities_by_connection ON identities (connection, user_id);
CREATE INDEX identities_by_provider ON identities (provider, identity_user_id);

-- Substring search over 100,000 users (issue 9 point 2): an FTS5 trigram index over the users table
-- itself (external content, rowid = seq), so bare terms of 3+ characters never scan the table.
CREATE VIRTUAL TABLE users_fts USING fts5(
  user_id, email, name, nickname, username, given_name, family_name, phone_number,
  content='users', content_rowid='seq', tokenize='trigram'
);

CREATE TRIGGER users_after_insert AFTER INSERT ON users BEGIN
  INSERT INTO users_fts (rowid, user_id, email, name, nickname, username, given_name, family_name, phone_number)
    VALUES (NEW.seq, NEW.user_id, NEW.email, NEW.name, NEW.nickname, NEW.username, NEW.given_name, NEW.family_name, NEW.phone_number);
  INSERT INTO identities (source_user_id, user_id, provider, connection, identity_user_id, linked_at)
    VALUES (
      NEW.user_id,
      coalesce(NEW.linked_to, NEW.user_id),
      CASE WHEN instr(NEW.user_id, '|') > 0 THEN substr(NEW.user_id, 1, instr(NEW.user_id, '|') - 1) ELSE 'auth0' END,
      NEW.connection,
      CASE WHEN instr(NEW.user_id, '|') > 0 THEN substr(NEW.user_id, instr(NEW.user_id, '|') + 1) ELSE NEW.user_id END,
      NEW.created_at
    );
END;

CREATE TRIGGER users_after_delete AFTER DELETE ON users BEGIN
  INSERT INTO users_fts (users_fts, rowid, user_id, email, name, nickname, username, given_name, family_name, phone_number)
    VALUES ('delete', OLD.seq, OLD.user_id, OLD.email, OLD.name, OLD.nickname, OLD.username, OLD.given_name, OLD.family_name, OLD.phone_number);
  DELETE FROM identities WHERE source_user_id = OLD.user_id;
END;

CREATE TRIGGER users_after_update_search AFTER UPDATE OF user_id, email, name, nickname, username, given_name, family_name, phone_number ON users BEGIN
  INSERT INTO users_fts (users_fts, rowid, user_id, email, name, nickname, username, given_name, family_name, phone_number)
    VALUES ('delete', OLD.seq, OLD.user_id, OLD.email, OLD.name, OLD.nickname, OLD.username, OLD.given_name, OLD.family_name, OLD.phone_number);
  INSERT INTO users_fts (rowid, user_id, email, name, nickname, username, given_name, family_name, phone_number)
    VALUES (NEW.seq, NEW.user_id, NEW.email, NEW.name, NEW.nickname, NEW.username, NEW.given_name, NEW.family_name, NEW.phone_number);
END;

CREATE TRIGGER users_after_update_link AFTER UPDATE OF linked_to ON users BEGIN
  UPDATE identities SET user_id = coalesce(NEW.linked_to, NEW.user_id) WHERE source_user_id = NEW.user_id;
END;

-- Backfill: the index and one identity for every user that existed before this migration.
INSERT INTO users_fts (users_fts) VALUES ('rebuild');
INSERT INTO identities (source_user_id, user_id, provider, connection, identity_user_id, linked_at)
  SELECT user_id, user_id,
    CASE WHEN instr(user_id, '|') > 0 THEN substr(user_id, 1, instr(user_id, '|') - 1) ELSE 'auth0' END,
    connection,
    CASE WHEN instr(user_id, '|') > 0 THEN substr(user_id, instr(user_id, '|') + 1) ELSE user_id END,
    created_at
  FROM users;
