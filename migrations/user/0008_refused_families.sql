-- Refresh families refused before they exist (RFC 6749 §4.1.2): a replayed authorization code revokes the
-- family its first redemption issues, but the replay can reach this object before that issue does. The
-- family's id is remembered here and its issue refused. Kept a day (far longer than a code lives), then
-- removed by the object's alarm, as ended sessions are.
CREATE TABLE refused_families (
  family_id TEXT PRIMARY KEY,
  refused_at INTEGER NOT NULL
);
CREATE INDEX refused_families_by_time ON refused_families (refused_at);
