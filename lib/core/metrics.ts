import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import { Tracer } from '@aws-lambda-powertools/tracer';

/**
 * Metrics (Powertools, CloudWatch embedded metric format) and traces (Powertools Tracer,
 * X-Ray), module singletons beside the logger (lib/core/logger.ts), shared by warm
 * invocations. One place names every metric the service emits and the alarms and the
 * dashboard read (infra/alarms.ts, infra/dashboard.ts).
 *
 * Dimensions are low-cardinality only: `service` (Powertools' default) and `family` (the
 * route family, lib/routes.ts). Never a tenant id, a key id, a name or a value: a dimension
 * value is a separate metric (cost) and lands in CloudWatch in the clear.
 *
 * Locally (both runtimes and the tests) metrics are off unless asked for
 * (POWERTOOLS_METRICS_DISABLED=false); tracing is on only in Lambda (Powertools' own rule:
 * outside the Lambda execution environment, or with POWERTOOLS_TRACE_ENABLED=false, the
 * tracer does nothing and a captured client is returned as it is).
 */
const SERVICE = process.env.SERVICE_NAME ?? 'secrets-api';

/** Metric names (CloudWatch): one meaning each. */
export const METRIC = {
  /** Every API request (Count), dimension family. */
  requests: 'requests',
  /** Requests answered 5xx (Count), dimension family. */
  errors: 'errors',
  /** Requests answered 4xx (Count), dimension family. */
  clientErrors: 'client_errors',
  /** Handler latency, from the first middleware to the response (Milliseconds), dimension family. */
  latency: 'latency',
  /** Rate-limiter decisions (lib/ratelimit/gate.ts): admitted and refused (429) requests (Count). */
  limiterAllowed: 'limiter_allowed',
  limiterDenied: 'limiter_denied',
  /** Calls to AWS KMS (envelope data keys and KMS signing keys) and to the HSM (PKCS#11) (Count). */
  kmsCalls: 'kms_calls',
  hsmCalls: 'hsm_calls',
  /** Audit queue messages the writer refused (lib/audit/queue.ts: v1, unverified MAC, a key of another tenant) (Count). */
  auditRefused: 'audit_refused',
} as const;

/** Powertools Metrics, with its own off switch readable (POWERTOOLS_METRICS_DISABLED, POWERTOOLS_DEV). */
class ServiceMetrics extends Metrics {
  get off(): boolean {
    return this.isDisabled();
  }
}
export const metrics = new ServiceMetrics({ namespace: process.env.POWERTOOLS_METRICS_NAMESPACE ?? SERVICE, serviceName: SERVICE });
export const tracer = new Tracer({ serviceName: SERVICE, captureHTTPsRequests: false });

/** Counts one event (Count unit). */
export function count(name: (typeof METRIC)[keyof typeof METRIC], n = 1): void {
  metrics.addMetric(name, MetricUnit.Count, n);
}

/** A request's outcome: requests, errors by class and latency, with its route family as the one dimension. */
export function recordRequest(family: string, status: number, latencyMs: number): void {
  metrics.addDimension('family', family);
  count(METRIC.requests);
  if (status >= 500) count(METRIC.errors);
  else if (status >= 400) count(METRIC.clientErrors);
  metrics.addMetric(METRIC.latency, MetricUnit.Milliseconds, latencyMs);
}

/** Writes the stored metrics (one EMF line) and clears them; nothing when none were recorded. */
export function flushMetrics(): void {
  if (metrics.hasStoredMetrics()) metrics.publishStoredMetrics();
}

/**
 * The stored metrics as fields of the request's log line (one line a request, not two: docs/cost.md),
 * then cleared; undefined when there are none or metrics are off. CloudWatch extracts EMF from
 * any JSON log line with an `_aws` directive whose metric and dimension names are top-level
 * keys: the fields are the EMF document less its `service` dimension, which the logger's own
 * `service` key (a reserved key of the logger, the same SERVICE_NAME) carries. A line the
 * logger would not print (a log level above INFO) cannot carry them: `inline` false
 * publishes them on their own line as before.
 */
export function metricFields(inline: boolean): Record<string, unknown> | undefined {
  if (!metrics.hasStoredMetrics()) return undefined;
  if (!inline || metrics.off) {
    metrics.publishStoredMetrics();
    return undefined;
  }
  try {
    const { service: _dimension, ...doc } = metrics.serializeMetrics() as unknown as Record<string, unknown>;
    return doc;
  } finally {
    metrics.clearMetrics();
    metrics.clearDimensions();
    metrics.clearMetadata();
  }
}

interface MiddlewareClient {
  middlewareStack: {
    add(mw: (next: (args: unknown) => Promise<unknown>) => (args: unknown) => Promise<unknown>, opts: { step: 'initialize'; name: string }): void;
  };
}

/**
 * A shared AWS SDK v3 client, traced (a subsegment per call) and, with `counter`, counted per
 * call (kms_calls). Returns the client.
 */
export function observeClient<C extends object>(client: C, counter?: typeof METRIC.kmsCalls): C {
  if (counter) {
    (client as unknown as MiddlewareClient).middlewareStack.add(
      (next) => async (args) => {
        count(counter);
        return next(args);
      },
      { step: 'initialize', name: `count-${counter}` },
    );
  }
  return tracer.captureAWSv3Client(client);
}
