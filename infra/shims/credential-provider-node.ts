/**
 * Stand-in for `@aws-sdk/credential-provider-node` in the Lambda bundles (infra/bundle.ts
 * SHIMS). Every AWS SDK client's default configuration imports that package's
 * `defaultProvider`, a chain of SSO, INI files, credential processes, web identity and
 * container/instance metadata that pulls the SSO and STS clients into each bundle. In Lambda
 * the execution role's credentials are always in the environment (AWS_ACCESS_KEY_ID,
 * AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN), the first link of that chain, so the bundles
 * read exactly that. Tenant credentials (lib/tenancy/credentials.ts) are passed to their
 * clients explicitly and never come through here.
 */
interface EnvCredentials {
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
  readonly sessionToken?: string;
}

export const defaultProvider = (_init?: unknown) => async (): Promise<EnvCredentials> => {
  const { AWS_ACCESS_KEY_ID: accessKeyId, AWS_SECRET_ACCESS_KEY: secretAccessKey, AWS_SESSION_TOKEN: sessionToken } = process.env;
  if (!accessKeyId || !secretAccessKey) {
    throw new Error('no AWS credentials in the environment (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY): Lambda sets them from the execution role');
  }
  return { accessKeyId, secretAccessKey, ...(sessionToken ? { sessionToken } : {}) };
};
