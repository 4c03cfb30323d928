export const RELEASE_STORE: string;
export function schemaVersions(): { tenant: string | null; user: string | null; platform: string | null };
