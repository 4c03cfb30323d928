import type { ErrorEntry } from "../classes";

/** Failures of actions (a part of the one catalogue, errors/index.ts). */
export const ACTION_ERRORS = {
  // Actions (issue 13).
  inexistent_action: { status: 404, message: "The action does not exist", errorCode: "inexistent_action" },
  inexistent_action_version: { status: 404, message: "The action version does not exist", errorCode: "inexistent_action_version" },
  inexistent_action_execution: { status: 404, message: "The action execution does not exist", errorCode: "inexistent_action_execution" },
  action_conflict: { status: 409, message: 'An action named "{name}" already exists', errorCode: "action_conflict" },
  action_changed: { status: 409, message: "The action changed while it was being deployed; retry the request", errorCode: "action_conflict" },
  action_dependencies_unsupported: {
    status: 400,
    message: "Dependencies are not supported: actions may use only the provided API and built-in modules ({names})",
    errorCode: "invalid_body",
  },
  action_build_failed: { status: 400, message: "The action's code does not build: {detail}", errorCode: "action_build_failed" },
  action_not_deployed: { status: 400, message: 'The action "{name}" must be deployed before it can be bound', errorCode: "action_not_deployed" },
  action_trigger_mismatch: { status: 400, message: 'The action "{name}" does not support the trigger "{trigger}"', errorCode: "invalid_body" },
  action_bound: {
    status: 400,
    message: "The action is bound to {triggers}; unbind it first or delete with force=true",
    errorCode: "action_bound",
  },
  action_secret_value_required: { status: 400, message: 'The new secret "{name}" needs a value', errorCode: "invalid_body" },
  inexistent_binding_ref: { status: 400, message: 'No action matches the binding reference {type} "{value}"', errorCode: "invalid_body" },
  // Log streams.
  inexistent_log_stream: { status: 404, message: "The log stream does not exist", errorCode: "inexistent_log_stream" },
} as const satisfies Record<string, ErrorEntry>;
