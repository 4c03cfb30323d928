-- Second-factor attempts of one user (issue 12 point 3): wrong codes in a rolling 5 minutes lock the user's
-- MFA (5 failures), serialized here like the password throttle; and the TOTP time steps already used, so
-- each code is accepted once (RFC 6238 §5.2).
CREATE TABLE mfa_failures (
  id INTEGER PRIMARY KEY,
  failed_at INTEGER NOT NULL
);

CREATE TABLE totp_used_steps (
  method_id TEXT NOT NULL,
  step INTEGER NOT NULL,
  used_at INTEGER NOT NULL,
  PRIMARY KEY (method_id, step)
);
