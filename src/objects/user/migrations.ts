import core from "../../../migrations/user/0001_refresh_and_throttle.sql";
import rotation from "../../../migrations/user/0002_refresh_rotation.sql";
import cleanup from "../../../migrations/user/0003_cleanup.sql";
import mfa from "../../../migrations/user/0004_mfa.sql";
import loginFailureIp from "../../../migrations/user/0005_login_failure_ip.sql";
import endedSessions from "../../../migrations/user/0006_ended_sessions.sql";
import refreshMetadata from "../../../migrations/user/0007_refresh_metadata.sql";
import refusedFamilies from "../../../migrations/user/0008_refused_families.sql";
import consoleSessions from "../../../migrations/user/0009_console_sessions.sql";
import rotationIndexes from "../../../migrations/user/0010_refresh_rotation_indexes.sql";
import { defineMigrations } from "../sql";

/** UserObject schema, append-only. */
export const userMigrations = defineMigrations("user", [
  { name: "0001_refresh_and_throttle", sql: core },
  { name: "0002_refresh_rotation", sql: rotation },
  { name: "0003_cleanup", sql: cleanup },
  { name: "0004_mfa", sql: mfa },
  { name: "0005_login_failure_ip", sql: loginFailureIp },
  { name: "0006_ended_sessions", sql: endedSessions },
  { name: "0007_refresh_metadata", sql: refreshMetadata },
  { name: "0008_refused_families", sql: refusedFamilies },
  { name: "0009_console_sessions", sql: consoleSessions },
  { name: "0010_refresh_rotation_indexes", sql: rotationIndexes },
]);
