/**
 * The one clock (issue 7): objects and worker read the time here, never `Date.now()` directly, so tests of
 * expiry, leeway, activation and retention can move time instead of sleeping.
 */

/** Epoch milliseconds. */
export type Clock = () => number;

const systemClock: Clock = () => Date.now();
let current: Clock = systemClock;

/** The current time in epoch milliseconds. */
export const now = (): number => current();

/** The current time in epoch seconds (JWT `iat`, `exp`, `auth_time`). */
export const nowSeconds = (): number => Math.floor(current() / 1000);

/**
 * Replaces the clock for this isolate (tests); `undefined` restores the system clock. Durable Objects in the
 * same isolate (the vitest pool runs them there) see the same clock.
 */
export function setClock(clock?: Clock): void {
  current = clock ?? systemClock;
}
