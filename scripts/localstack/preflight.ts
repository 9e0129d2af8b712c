/**
 * What `npm run deploy:local` and `npm run test:localstack` check before they start cdklocal:
 * that the environment is one cdklocal 3.0.4 accepts, and that something answers at the
 * endpoint it will use; each problem is said in one line naming what to set or start
 * (docs/deployment.md, "LocalStack"). Run on its own: `tsx scripts/localstack/preflight.ts`
 * (exit 1 with that line).
 *
 * cdklocal's rules (node_modules/aws-cdk-local/src/index.js): with AWS_ENDPOINT_URL set it
 * refuses to run unless AWS_ENDPOINT_URL_S3 is set too; without either it uses
 * http://localhost.localstack.cloud:4566 (EDGE_PORT) and s3.localhost.localstack.cloud (a
 * public DNS name resolving to 127.0.0.1); it drops every other AWS_* variable (credentials
 * `test`, region us-east-1) unless AWS_ENVAR_ALLOWLIST names it.
 */
import { pathToFileURL } from 'node:url';

const edgePort = (env: NodeJS.ProcessEnv) => env.EDGE_PORT ?? '4566';
const protocol = (env: NodeJS.ProcessEnv) => (['1', 'true'].includes(env.USE_SSL ?? '') ? 'https' : 'http');

/** The endpoint cdklocal will talk to, as it picks it. */
export function localEndpoint(env: NodeJS.ProcessEnv = process.env): string {
  return env.AWS_ENDPOINT_URL || `${protocol(env)}://localhost.localstack.cloud:${edgePort(env)}`;
}

/** A variable combination cdklocal refuses, in one line; undefined when it accepts it. */
export function environmentProblem(env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (env.AWS_ENDPOINT_URL !== undefined && env.AWS_ENDPOINT_URL_S3 === undefined) {
    return `AWS_ENDPOINT_URL is set (${env.AWS_ENDPOINT_URL}) but AWS_ENDPOINT_URL_S3 is not, which cdklocal 3.0.4 refuses: export AWS_ENDPOINT_URL_S3=${env.AWS_ENDPOINT_URL} (or unset AWS_ENDPOINT_URL for LocalStack's default http://localhost.localstack.cloud:4566)`;
  }
  if (env.AWS_ENDPOINT_URL === '') return 'AWS_ENDPOINT_URL is set but empty: set it to the endpoint (http://localhost:4566) or unset it';
  return undefined;
}

/** The environment's problem, or else whether the endpoint answers HTTP at all (any status will do), in one line. */
export async function endpointProblem(env: NodeJS.ProcessEnv = process.env, timeoutMs = 3000): Promise<string | undefined> {
  const bad = environmentProblem(env);
  if (bad) return bad;
  const endpoint = localEndpoint(env);
  try {
    await fetch(endpoint, { signal: AbortSignal.timeout(timeoutMs) });
    return undefined;
  } catch (error) {
    const c = (error as { cause?: { code?: string; message?: string; errors?: { code?: string }[] } }).cause;
    const cause = c?.code ?? c?.errors?.[0]?.code ?? c?.message ?? (error as Error).message;
    return `nothing answers at ${endpoint} (${cause}): start LocalStack (docs/deployment.md, "LocalStack", step 1) or export AWS_ENDPOINT_URL and AWS_ENDPOINT_URL_S3 naming where it runs`;
  }
}

if (process.argv[1] && pathToFileURL(process.argv[1]).href === import.meta.url) {
  const problem = await endpointProblem();
  if (problem) {
    process.stderr.write(`${problem}\n`);
    process.exit(1);
  }
}

/**
 * The environment docs/deployment.md documents for cdklocal, for an endpoint: both endpoint
 * variables (cdklocal refuses one without the other) naming the same address — an IP address
 * or `localhost`, so S3 requests are path-style — and LocalStack's dummy credentials.
 */
export function cdklocalEnvironment(endpoint: string, account = '000000000000', region = 'us-east-1'): NodeJS.ProcessEnv {
  return {
    AWS_ENDPOINT_URL: endpoint,
    AWS_ENDPOINT_URL_S3: endpoint,
    AWS_ACCESS_KEY_ID: 'test',
    AWS_SECRET_ACCESS_KEY: 'test',
    AWS_REGION: region,
    AWS_DEFAULT_REGION: region,
    CDK_DEFAULT_ACCOUNT: account,
    CDK_DEFAULT_REGION: region,
  };
}
