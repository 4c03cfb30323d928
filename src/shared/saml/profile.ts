/**
 * From a user to SAML attributes and a NameID, per the application's `addons.samlp` settings, as the
 * reference platform maps them: default mappings (user_id, email, name, given_name, family_name, upn,
 * groups to their claim types) merged with the application's, unmapped fields passed through under
 * PASSTHROUGH_NAMESPACE (or as-is with `mapUnknownClaimsAsIs`), and the NameID taken from the first of
 * `nameIdentifierProbes` that has a value.
 */
import type { SamlpSettings } from "../schemas/samlp";
import type { UserRecord } from "../schemas/users";
import { valueAt } from "../profile-path";
import { CLAIMS, NAME_ID_FORMATS, PASSTHROUGH_NAMESPACE } from "./constants";

export type AttributeValue = string | number | boolean;
export interface SamlAttribute {
  name: string;
  values: AttributeValue[];
}

/** The reference platform's default `mappings` (profile field -> attribute name). */
export const DEFAULT_MAPPINGS: Record<string, string> = {
  user_id: CLAIMS.nameIdentifier,
  email: CLAIMS.email,
  name: CLAIMS.name,
  given_name: CLAIMS.givenName,
  family_name: CLAIMS.surname,
  upn: CLAIMS.upn,
  groups: CLAIMS.groups,
};

/** @default the reference platform's probes: nameidentifier, emailaddress, name */
export const DEFAULT_NAME_IDENTIFIER_PROBES = [CLAIMS.nameIdentifier, CLAIMS.email, CLAIMS.name];

/**
 * The profile a SAML response is built from: the user's profile as the reference platform's SAML addon sees
 * it (names, contact, metadata, identities), never secrets or internal counters (last_ip, logins_count,
 * blocked, linked_to). Mappings read it by path (`user_metadata.plan`); only primitive fields pass through
 * unmapped, so metadata objects leave only through a mapping the application configured.
 */
function profileOf(user: UserRecord, settings: SamlpSettings): Record<string, unknown> {
  const profile: Record<string, unknown> = {
    user_id: user.user_id,
    email: user.email,
    email_verified: user.email_verified,
    name: user.name,
    given_name: user.given_name,
    family_name: user.family_name,
    nickname: user.nickname,
    username: user.username,
    phone_number: user.phone_number,
    picture: user.picture,
    app_metadata: user.app_metadata,
    user_metadata: user.user_metadata,
    identities: user.identities.map(({ connection, provider, user_id, isSocial }) => ({ connection, provider, user_id, isSocial })),
    created_at: user.created_at,
    updated_at: user.updated_at,
  };
  if (settings.createUpnClaim !== false && user.email) profile.upn = user.email;
  return profile;
}

const isPrimitive = (value: unknown): value is AttributeValue =>
  (typeof value === "string" && value !== "") || typeof value === "number" || typeof value === "boolean";

/** A value an attribute can carry: a non-empty primitive or a non-empty list of them (absent otherwise). */
const present = (value: unknown): value is AttributeValue | AttributeValue[] =>
  Array.isArray(value) ? value.length > 0 && value.every(isPrimitive) : isPrimitive(value);

/** The attributes of a user, in mapping order then passthrough order. */
export function samlAttributes(user: UserRecord, settings: SamlpSettings): SamlAttribute[] {
  const profile = profileOf(user, settings);
  const mappings: Record<string, string | string[]> = { ...DEFAULT_MAPPINGS, ...(settings.mappings ?? {}) };
  const byName = new Map<string, AttributeValue[]>();
  const add = (name: string, value: AttributeValue | AttributeValue[]) => {
    const values = byName.get(name) ?? [];
    values.push(...(Array.isArray(value) ? value : [value]));
    byName.set(name, values);
  };
  for (const [field, names] of Object.entries(mappings)) {
    const value = valueAt(profile, field);
    if (!present(value)) continue;
    for (const name of Array.isArray(names) ? names : [names]) add(name, value);
  }
  if (settings.passthroughClaimsWithNoMapping !== false) {
    for (const [field, value] of Object.entries(profile)) {
      if (field in mappings || !present(value)) continue;
      add(settings.mapUnknownClaimsAsIs ? field : `${PASSTHROUGH_NAMESPACE}${field}`, value);
    }
  }
  return [...byName].map(([name, values]) => ({ name, values }));
}

/** The NameID: the first probe with a value, else the user id; its format from the settings. */
export function nameIdentifier(user: UserRecord, attributes: SamlAttribute[], settings: SamlpSettings): { value: string; format: string } {
  const probes = settings.nameIdentifierProbes ?? DEFAULT_NAME_IDENTIFIER_PROBES;
  let value: string | undefined;
  for (const probe of probes) {
    const found = attributes.find((a) => a.name === probe)?.values[0];
    if (found !== undefined) {
      value = String(found);
      break;
    }
  }
  return { value: value ?? user.user_id, format: settings.nameIdentifierFormat ?? NAME_ID_FORMATS.unspecified };
}
