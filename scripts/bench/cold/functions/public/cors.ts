/** infra/bundle.ts always builds the CORS preflight module; the baselines' build needs one too (not measured). */
export const preflight = async () => ({ statusCode: 204, body: '' });
