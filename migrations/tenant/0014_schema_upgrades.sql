-- Schema pins of shared tenants (issue 16 point 6): each upgrade operation that moved this object's schema.
-- Expand-only: code of this release reads it when present and works without it (an object left at 0014).
CREATE TABLE schema_upgrades (
  id INTEGER PRIMARY KEY,
  from_version TEXT,
  to_version TEXT NOT NULL,
  operation_id TEXT,
  applied_at INTEGER NOT NULL
);
