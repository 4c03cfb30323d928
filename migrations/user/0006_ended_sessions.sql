-- Sessions whose revocation cascade reached this user (SPEC §3.3). A code consumed just before its session's
-- revocation and exchanged just after it would otherwise start a refresh-token family the cascade already
-- passed: issuing under an ended session is refused here, where issue and cascade are serialized. Kept for
-- a day (far longer than any code lives), then removed by the object's alarm.
CREATE TABLE ended_sessions (
  session_id TEXT PRIMARY KEY,
  ended_at INTEGER NOT NULL
);
CREATE INDEX ended_sessions_by_time ON ended_sessions (ended_at);
