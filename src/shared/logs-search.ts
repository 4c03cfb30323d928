import type { LuceneSqlConfig } from "./lucene";

export const LOGS_SEARCH: LuceneSqlConfig = {
  fields: {
    type: { kind: "exact", column: "type" },
    user_id: { kind: "exact", column: "user_id" },
    client_id: { kind: "exact", column: "client_id" },
    ip: { kind: "exact", column: "ip" },
    event_type: { kind: "exact", column: "event_type" },
    date: { kind: "date", column: "date" },
    description: { kind: "text", column: "description" },
    // Gatehouse extension: the event's details by path, e.g. `details.target.id:"rol_1"` finds every
    // management write on one resource (the console's change history, issue 30).
    details: { kind: "json", column: "details" },
  },
  bareFields: ["description"],
  // A bare email address (failed logins name it) is looked for in the description too.
  emailField: "description",
};
