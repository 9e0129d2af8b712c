import { Logger } from '@aws-lambda-powertools/logger';

/**
 * The one structured JSON logger (Powertools), a module singleton shared by warm
 * invocations. Log metadata only: never a body, header value, secret, key or token.
 */
export const logger = new Logger({ serviceName: process.env.SERVICE_NAME ?? 'secrets-api' });
