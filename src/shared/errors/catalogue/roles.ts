import type { ErrorEntry } from "../classes";

/** Failures of roles (a part of the one catalogue, errors/index.ts). */
export const ROLE_ERRORS = {
  // Roles and permissions (SPEC §4.2 "Clients, connections, roles, resource servers").
  inexistent_role: { status: 404, message: "The role does not exist", errorCode: "inexistent_role" },
  role_conflict: { status: 409, message: 'A role named "{name}" already exists', errorCode: "role_conflict" },
  inexistent_permission_api: {
    status: 404,
    message: 'Resource server "{identifier}" does not exist',
    errorCode: "inexistent_resource_server",
  },
  undefined_permissions: {
    status: 400,
    message: 'Permissions not defined on the resource server "{identifier}": {permissions}',
    errorCode: "invalid_body",
  },
  checkpoint_sort: {
    status: 400,
    message: "sort cannot be combined with checkpoint pagination (from, take)",
    errorCode: "invalid_query_string",
  },
} as const satisfies Record<string, ErrorEntry>;
