import { defineHandler, ok } from '../../lib/http/index.js';
import { IdParams } from '../../lib/schemas.js';
import { ExtractBody, getExtractionJob, startExtraction } from '../../lib/tools/extraction.js';

/** Database extraction jobs (lib/tools/extraction.ts): queued here, run by the jobs worker (functions/tools/extraction-worker.ts). */
export const start = defineHandler({
  body: ExtractBody,
  async handler({ ctx, body }) {
    // 202: the job runs asynchronously; GET /extraction/jobs/{id} follows it
    return { status: 202, data: { job: await startExtraction(ctx, body) } };
  },
});

export const get = defineHandler({
  params: IdParams,
  async handler({ ctx, params }) {
    return ok({ job: await getExtractionJob(ctx, params.id) });
  },
});
