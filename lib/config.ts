import { z } from 'zod';

/**
 * Every environment variable the service reads, parsed once at cold start with zod and
 * failing fast. Handlers never read process.env; they get what they need from here.
 */
const Env = z
  .object({
    TABLE_NAME: z.string().min(3).default('secrets'),
    /** Set only for DynamoDB Local (the embedded runtime and tests). */
    DYNAMODB_ENDPOINT: z.url().optional(),
    AWS_REGION: z.string().default('us-east-1'),
    /** `kms` in AWS; `local` for the embedded runtime (a master key file wraps data keys). */
    KEY_PROVIDER: z.enum(['kms', 'local']).default('kms'),
    KMS_KEY_ID: z.string().optional(),
    LOCAL_MASTER_KEY_FILE: z.string().optional(),
    /** How long an unwrapped tenant data key stays in memory. */
    DATA_KEY_CACHE_SECONDS: z.coerce.number().int().min(0).max(3600).default(300),
    SERVICE_NAME: z.string().default('secrets-api'),
    SERVICE_VERSION: z.string().default('0.1.0'),
    /** Public base URL of the API, used to build absolute links (temporary access URLs). */
    PUBLIC_BASE_URL: z.url().optional(),
    /** Largest accepted nesting depth of a JSON body. */
    MAX_JSON_DEPTH: z.coerce.number().int().min(2).max(64).default(16),
  })
  .superRefine((env, ctx) => {
    if (env.KEY_PROVIDER === 'kms' && !env.KMS_KEY_ID) {
      ctx.addIssue({ code: 'custom', path: ['KMS_KEY_ID'], message: 'KMS_KEY_ID is required when KEY_PROVIDER=kms' });
    }
    if (env.KEY_PROVIDER === 'local' && !env.LOCAL_MASTER_KEY_FILE) {
      ctx.addIssue({ code: 'custom', path: ['LOCAL_MASTER_KEY_FILE'], message: 'LOCAL_MASTER_KEY_FILE is required when KEY_PROVIDER=local' });
    }
  });

export type Config = z.infer<typeof Env>;

let cached: Config | undefined;

export function config(): Config {
  if (!cached) {
    const parsed = Env.safeParse(process.env);
    if (!parsed.success) {
      const problems = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
      throw new Error(`invalid configuration: ${problems}`);
    }
    cached = parsed.data;
  }
  return cached;
}
