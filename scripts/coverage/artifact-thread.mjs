/**
 * A worker thread of scripts/coverage/artifact.ts: converts one share of the bundles
 * (`workerData`: a BundleJob) and posts the result back. Plain JavaScript that imports the
 * TypeScript module by its own name: under tsx (npm test) the thread inherits tsx's loader, in
 * a vitest worker Node 22 strips the types itself.
 */
import { parentPort, workerData } from 'node:worker_threads';

const { convertBundles } = await import(new URL('./artifact.ts', import.meta.url).href);
parentPort.postMessage(await convertBundles(workerData));
