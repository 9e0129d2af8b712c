/** infra/bundle.ts always builds a not-implemented module; the baselines' build needs one too (not measured). */
export const handler = async () => ({ statusCode: 501, body: '' });
