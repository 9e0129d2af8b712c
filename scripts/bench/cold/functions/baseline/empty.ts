/** bench:cold's empty-handler baseline: what a function costs with no code of its own. */
export const handler = async () => ({ statusCode: 204, body: '' });
