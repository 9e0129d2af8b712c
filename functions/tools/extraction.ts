import { defineHandler, ok } from '../../lib/http/index.js';
import { IdParams } from '../../lib/schemas.js';
import { ExtractBody, getExtractionJob, startExtraction } from '../../lib/tools/extraction.js';
import { ExtractionJobAnswer } from '../../lib/tools/schemas.js';

/** Database extraction jobs (lib/tools/extraction.ts): queued here, run by the jobs worker (functions/tools/extraction-worker.ts). */
export const start = defineHandler({
  summary: 'Start a database extraction job',
  description:
    'Reads rows of a database integration into credentials, asynchronously: 202 with the job, then follow GET /extraction/jobs/{id}. A query of your own needs admin:*; otherwise name a table and its columns.',
  responses: { 202: ExtractionJobAnswer },
  errors: ['insufficient_scope', 'not_found'],
  body: ExtractBody,
  async handler({ ctx, body }) {
    // 202: the job runs asynchronously; GET /extraction/jobs/{id} follows it
    return { status: 202, data: { job: await startExtraction(ctx, body) } };
  },
});

export const get = defineHandler({
  summary: 'Get a database extraction job',
  responses: { 200: ExtractionJobAnswer },
  errors: ['not_found'],
  params: IdParams,
  async handler({ ctx, params }) {
    return ok({ job: await getExtractionJob(ctx, params.id) });
  },
});
