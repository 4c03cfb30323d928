import core from "../../../migrations/user/0001_refresh_and_throttle.sql";
import { defineMigrations } from "../sql";

/** UserObject schema, append-only. */
export const userMigrations = defineMigrations("user", [{ name: "0001_refresh_and_throttle", sql: core }]);
