/** Types for scripts/chromium.mjs (the TypeScript tests import it). */

export const CHROMIUM_ENV: string[];
export const SYSTEM_CHROMIUM: string[];
export const CHROMIUM_NAMES: string[];
/** The one line printed when no browser can be had. */
export const NO_CHROMIUM: string;
export function findChromium(options?: {
  env?: Record<string, string | undefined>;
  system?: string[];
  bundled?: boolean;
}): Promise<{ path: string; source: string } | { error: string }>;
