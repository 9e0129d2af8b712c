/** Last global setup of scripts/coverage/vitest.config.ts: test workers start without NODE_V8_COVERAGE (vitest's provider covers them). */
export default function setup() {
  delete process.env.NODE_V8_COVERAGE;
}
