import { LogFormatter, LogItem, Logger } from '@aws-lambda-powertools/logger';
import type { LogAttributes, UnformattedAttributes } from '@aws-lambda-powertools/logger/types';

/**
 * Powertools' own line, less what the line already says elsewhere (CloudWatch Logs prices
 * ingestion by the byte: docs/cost.md):
 * - `timestamp` on a line that carries an EMF document (the request line with metrics on,
 *   lib/core/metrics.ts `metricFields`): its `_aws.Timestamp` is the same instant in
 *   milliseconds, and CloudWatch keeps each event's own timestamp (Logs Insights' @timestamp).
 *   Every other line keeps it (locally, metrics are off and the line is its only time).
 * - `sampling_rate` while it is 0 (no debug sampling configured): a constant of the logger.
 * The keys and their order are otherwise Powertools' (PowertoolsLogFormatter).
 */
class LeanLogFormatter extends LogFormatter {
  formatAttributes(attributes: UnformattedAttributes, additional: LogAttributes): LogItem {
    const ctx = attributes.lambdaContext;
    return new LogItem({
      attributes: {
        level: attributes.logLevel,
        message: attributes.message,
        timestamp: '_aws' in additional ? undefined : this.formatTimestamp(attributes.timestamp),
        service: attributes.serviceName,
        cold_start: ctx?.coldStart,
        function_arn: ctx?.invokedFunctionArn,
        function_memory_size: ctx?.memoryLimitInMB,
        function_name: ctx?.functionName,
        function_request_id: ctx?.awsRequestId,
        sampling_rate: attributes.sampleRateValue || undefined,
        xray_trace_id: attributes.xRayTraceId,
      },
    }).addAttributes(additional);
  }
}

/**
 * The one structured JSON logger (Powertools), a module singleton shared by warm
 * invocations. Log metadata only: never a body, header value, secret, key or token.
 */
export const logger = new Logger({ serviceName: process.env.SERVICE_NAME ?? 'secrets-api', logFormatter: new LeanLogFormatter() });
