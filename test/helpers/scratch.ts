import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, onTestFinished } from 'vitest';

/**
 * A temporary directory for the running test, removed when the test finishes, passed or
 * failed: a file run on its own (outside `npm test`, whose run directory takes everything)
 * leaves nothing in the system's temporary directory.
 */
export function testDirectory(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** A temporary directory for a test file's own use (made at the file's top level), removed after its last test. */
export function fileDirectory(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}
