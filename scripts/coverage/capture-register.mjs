/**
 * Run as `node --import tsx --import ./capture-register.mjs <script>` with CAPTURE_OUT set:
 * records the JavaScript tsx produces for each .ts module (one JSON line each) and loads an
 * empty module in its place, so nothing runs. tsx installs in-thread hooks
 * (module.registerHooks); hooks registered after them run first and see their output.
 */
import { appendFileSync } from 'node:fs';
import { registerHooks } from 'node:module';

const out = process.env.CAPTURE_OUT;
registerHooks({
  load(url, context, nextLoad) {
    const loaded = nextLoad(url, context);
    if (out && url.startsWith('file:') && /\.[cm]?ts$/.test(url)) {
      appendFileSync(out, `${JSON.stringify({ url, source: String(loaded.source) })}\n`);
      return { format: 'module', source: 'export {};', shortCircuit: true };
    }
    return loaded;
  },
});
