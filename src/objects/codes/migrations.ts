import codes from "../../../migrations/codes/0001_codes.sql";
import { defineMigrations } from "../sql";

/** CodeObject (the code shards) schema, append-only. */
export const codeMigrations = defineMigrations("codes", [{ name: "0001_codes", sql: codes }]);
