/**
 * The bcrypt cost cap (issue 25 point 7), apart from bcryptjs so that the import's row checks (run in the
 * tenant object) can read it without loading the hashing library.
 */

/**
 * The highest bcrypt cost Gatehouse verifies or imports. Each step doubles the CPU time of one comparison
 * (cost 15 is about 2.8 s in a worker, cost 12 about 0.35 s), so a larger stored cost would let anyone who
 * knows an email spend seconds of CPU per login attempt. @default 12
 */
export const BCRYPT_MAX_COST = 12;

/** The cost a bcrypt hash in modular crypt format (`$2b$12$...`) names, or null when it names none. */
export function bcryptCost(hash: string): number | null {
  const match = /^\$2[aby]?\$(\d\d)\$/.exec(hash);
  return match ? Number(match[1]) : null;
}
