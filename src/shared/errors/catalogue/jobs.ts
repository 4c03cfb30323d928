import type { ErrorEntry } from "../classes";

/** Failures of jobs (a part of the one catalogue, errors/index.ts). */
export const JOB_ERRORS = {
  // User import and export jobs (issue 14 point 5, SPEC §4.2 "Failed events and jobs").
  inexistent_job: { status: 404, message: "The job does not exist.", errorCode: "inexistent_job" },
  import_not_multipart: { status: 415, message: "Content-Type must be multipart/form-data with a users file", errorCode: "unsupported_media_type" },
  import_field_required: { status: 400, message: "Payload validation error: 'Missing required property: {field}'", errorCode: "invalid_body" },
  import_field_invalid: { status: 400, message: "Payload validation error: '{detail}'", errorCode: "invalid_body" },
  import_file_too_large: { status: 413, message: "The users file exceeds {bytes} bytes; split it into several jobs", errorCode: "payload_too_large" },
  import_file_not_json: { status: 400, message: "The users file is not valid JSON: {detail}", errorCode: "invalid_body" },
  import_file_not_array: { status: 400, message: "The users file must be a JSON array of users", errorCode: "invalid_body" },
  import_file_empty: { status: 400, message: "The users file holds no users", errorCode: "invalid_body" },
  import_file_too_many_rows: { status: 400, message: "The users file holds more than {rows} users; split it into several jobs", errorCode: "invalid_body" },
  import_connection_not_found: { status: 400, message: "The connection does not exist.", errorCode: "inexistent_connection" },
  import_connection_not_database: { status: 400, message: "Users can only be imported into a database connection.", errorCode: "operation_not_supported" },
  export_link_invalid: { status: 403, message: "The export link is invalid or has expired.", errorCode: "invalid_signature" },
  // POST /jobs/verification-email.
  verification_email_no_address: { status: 400, message: "The user does not have an email address to verify.", errorCode: "invalid_body" },
  verification_identity_not_found: { status: 400, message: "The identity is not one of the user's identities.", errorCode: "invalid_body" },
} as const satisfies Record<string, ErrorEntry>;
