import type { TestProject } from 'vitest/node';
import { launchRuntime } from './runtime.js';

/**
 * The `source` project: the local runtime over the TypeScript sources (what `npm start`
 * serves), launched, not waited for: each test file waits for it (test/setup/ready.ts).
 */
export default async (project: TestProject) => (await launchRuntime(project, { artifact: false })).stop;
