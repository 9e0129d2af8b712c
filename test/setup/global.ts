import type { TestProject } from 'vitest/node';
import { startRuntime } from './runtime.js';

/** The `source` project: the local runtime over the TypeScript sources (what `npm start` serves). */
export default (project: TestProject) => startRuntime(project, { artifact: false });
