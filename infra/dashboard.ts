import { Duration } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import { Construct } from 'constructs';
import { serviceMetric } from './alarms.js';
import type { Settings } from './settings.js';

/**
 * The service's CloudWatch dashboard, from its own metrics (lib/core/metrics.ts): per route
 * family requests, 5xx rate and p99 latency (what the family alarms watch, infra/alarms.ts),
 * then the rate limiter's decisions and the KMS and HSM calls across the service.
 */
export class ServiceDashboard extends Construct {
  readonly dashboard: cloudwatch.Dashboard;

  constructor(scope: Construct, id: string, props: { settings: Settings; families: readonly string[]; alarms: readonly cloudwatch.IAlarm[] }) {
    super(scope, id);
    const { settings, families } = props;
    const period = Duration.minutes(5);
    const perFamily = (title: string, metric: (family: string, i: number) => cloudwatch.IMetric, unit?: string) =>
      new cloudwatch.GraphWidget({ title, width: 8, height: 6, left: families.map(metric), ...(unit ? { leftYAxis: { label: unit, showUnits: false } } : {}) });
    /** A service-wide total of a counter, whatever its dimensions (routes add `family`, background functions do not). */
    const total = (metricName: string, label: string) =>
      new cloudwatch.MathExpression({
        expression: `SUM(SEARCH('{${settings.name}} MetricName="${metricName}"', 'Sum', 300))`,
        label,
        period,
      });
    this.dashboard = new cloudwatch.Dashboard(this, 'Dashboard', {
      dashboardName: `${settings.name}-service`,
      defaultInterval: Duration.hours(3),
      widgets: [
        [
          perFamily('Requests by family', (f) => serviceMetric(settings, 'requests', f, 'Sum').with({ label: f })),
          perFamily(
            '5xx rate by family (%)',
            (f, i) =>
              new cloudwatch.MathExpression({
                expression: `100 * e${i} / r${i}`,
                label: f,
                usingMetrics: { [`e${i}`]: serviceMetric(settings, 'errors', f, 'Sum'), [`r${i}`]: serviceMetric(settings, 'requests', f, 'Sum') },
                period,
              }),
            '%',
          ),
          perFamily('p99 latency by family (ms)', (f) => serviceMetric(settings, 'latency', f, 'p99').with({ label: f }), 'ms'),
        ],
        [
          new cloudwatch.GraphWidget({
            title: 'Rate limiter decisions',
            width: 8,
            height: 6,
            left: [total('limiter_allowed', 'admitted'), total('limiter_denied', 'refused (429)')],
          }),
          new cloudwatch.GraphWidget({ title: 'KMS and HSM calls', width: 8, height: 6, left: [total('kms_calls', 'KMS'), total('hsm_calls', 'HSM (PKCS#11)')] }),
          new cloudwatch.AlarmStatusWidget({ title: 'Family alarms', width: 8, height: 6, alarms: [...props.alarms] }),
        ],
      ],
    });
  }
}
