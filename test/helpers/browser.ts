import { existsSync } from 'node:fs';
import { type Browser, chromium } from 'playwright-core';

/**
 * The browser the page tests drive (passkeys, the SRP sign-in page, OAuth consent, the CLI's
 * browser login, the served docs, `npm start`'s page): Debian's Chromium headless shell
 * (package chromium-headless-shell, which the pretest installs: scripts/setup/prerequisites.ts),
 * or CHROMIUM_PATH. The same Blink and V8 as the full browser, without its UI processes: on
 * the five page files of the source tier it took 4-5 CPU-s in three runs, full Chromium 12-14 in
 * two (`npx tsx scripts/bench/cpu-by-process.ts -- npx vitest run --project source <files>`).
 */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium-headless-shell';

/** Throws, saying what to install, when there is no browser (a test checks before its own setup). */
export function requireChromium(): void {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`Chromium not found at ${CHROMIUM}: apt-get install -y chromium-headless-shell (or set CHROMIUM_PATH)`);
  }
}

/** A headless Chromium, or an error that says what to install. */
export async function launchChromium(args: readonly string[] = []): Promise<Browser> {
  requireChromium();
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox', ...args] });
}
