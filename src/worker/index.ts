import { createApp } from "./app";

export { PlatformObject } from "../objects/platform/platform-object";
export { TenantObject } from "../objects/tenant/tenant-object";
export { UserObject } from "../objects/user/user-object";

const app = createApp();

export default {
  fetch: app.fetch,
} satisfies ExportedHandler<Env>;
