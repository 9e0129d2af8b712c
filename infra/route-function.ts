import { Annotations, Duration, RemovalPolicy } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import type * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as logs from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import type { Route } from '../lib/routes.js';
import { alarmActions } from './alarms.js';
import { usesKmsSigning } from './grants.js';
import { acknowledge } from './nag.js';
import { lambdaEntry } from './handlers.js';
import { functionName } from './naming.js';
import { hsmConfigured, missingHsmContext, type Settings } from './settings.js';

/** What every function of a deployment shares: the bundle, the environment, the HSM wiring. */
export interface FunctionDefaults {
  readonly settings: Settings;
  /** Environment of every function (table, key, service identity, base URL). */
  readonly environment: Readonly<Record<string, string>>;
  /** Added for routes with the `queue:send` grant. */
  readonly queueEnvironment: Readonly<Record<string, string>>;
  /** The documents bucket's name, for functions with a `documents:*` grant. */
  readonly documentsEnvironment?: Readonly<Record<string, string>>;
  /** Added for routes with the `jobs:send` grant. */
  readonly jobsEnvironment: Readonly<Record<string, string>>;
  /** Added for routes with the `audit:send` grant (the read-only routes: lib/audit/queue.ts). */
  readonly auditEnvironment: Readonly<Record<string, string>>;
  /** Added for routes with the `hsm` grant. */
  readonly hsmEnvironment: Readonly<Record<string, string>>;
  /** Added for routes with the `hsm:describe` grant (the cluster's state from the CloudHSM API, outside the VPC). */
  readonly hsmDescribeEnvironment: Readonly<Record<string, string>>;
  /** Added for routes with the `payment` grant (the payment provider and its secret; lib/billing). */
  readonly paymentEnvironment: Readonly<Record<string, string>>;
  /** The signing functions' security group (created by the API stack when the HSM is configured). */
  readonly hsmSecurityGroupId?: string;
  /** Reserved concurrency of each signing function (its share of the cluster's connections). */
  readonly hsmReservedConcurrency: number;
}

/** Timeout just under API Gateway's 29 s integration timeout: the function's own timeout is logged. */
export const FUNCTION_TIMEOUT = Duration.seconds(28);
export const RUNTIME = lambda.Runtime.NODEJS_22_X;
export const ARCHITECTURE = lambda.Architecture.ARM_64;

export interface ServiceFunctionProps {
  readonly functionName: string;
  readonly description: string;
  /** Lambda handler setting: `<module>.<export>` under the bundle. */
  readonly handler: string;
  readonly role: iam.IRole;
  readonly code: lambda.Code;
  readonly settings: Settings;
  readonly environment: Readonly<Record<string, string>>;
  readonly timeout?: Duration;
  readonly reservedConcurrency?: number;
  readonly layers?: readonly lambda.ILayerVersion[];
  /** Subnets and security groups (set on the L1: no VPC lookup at synth). */
  readonly vpc?: { readonly subnetIds: readonly string[]; readonly securityGroupIds: readonly string[] };
}

/**
 * THE construct that fixes every function's production defaults (route functions and
 * background jobs alike): nodejs22.x on arm64, the shared bundle, its own log group
 * `/aws/lambda/<name>` with the configured retention, JSON structured logs (application
 * INFO, platform WARN), active X-Ray tracing, source-mapped stack traces, memory from
 * context, a timeout just under API Gateway's.
 */
export class ServiceFunction extends Construct {
  readonly function: lambda.Function;

  constructor(scope: Construct, id: string, props: ServiceFunctionProps) {
    super(scope, id);
    const { settings } = props;
    const logGroup = new logs.LogGroup(this, 'Logs', {
      logGroupName: `/aws/lambda/${props.functionName}`,
      retention: retentionDays(settings.logRetentionDays),
      removalPolicy: settings.retainLogs ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY,
    });
    this.function = new lambda.Function(this, 'Function', {
      functionName: props.functionName,
      description: props.description,
      runtime: RUNTIME,
      architecture: ARCHITECTURE,
      code: props.code,
      handler: props.handler,
      role: props.role,
      memorySize: settings.memoryMb,
      timeout: props.timeout ?? FUNCTION_TIMEOUT,
      environment: { ...props.environment },
      logGroup,
      loggingFormat: lambda.LoggingFormat.JSON,
      applicationLogLevelV2: lambda.ApplicationLogLevel.INFO,
      systemLogLevelV2: lambda.SystemLogLevel.WARN,
      tracing: lambda.Tracing.ACTIVE,
      ...(props.reservedConcurrency !== undefined ? { reservedConcurrentExecutions: props.reservedConcurrency } : {}),
      ...(props.layers?.length ? { layers: [...props.layers] } : {}),
    });
    acknowledge(this.function, [
      {
        id: 'AwsSolutions-L1',
        reason: 'nodejs22.x is the runtime this service is built and tested for: the bundles target node22 (infra/bundle.ts) and the artifact test tier runs every one under a real Node 22 binary. nodejs24.x is newer and untested here; moving to it is a deliberate change with its own test run, made in RUNTIME.',
      },
    ]);
    if (props.vpc) {
      const cfn = this.function.node.defaultChild as lambda.CfnFunction;
      cfn.vpcConfig = { subnetIds: [...props.vpc.subnetIds], securityGroupIds: [...props.vpc.securityGroupIds] };
    }
  }
}

/**
 * One route's function: a ServiceFunction named after the route, running the route table's
 * handler, with the environment its grants need; for signing (`hsm`) routes also the
 * CloudHSM subnets, the signing security group, the PKCS#11 layer, reserved concurrency (its
 * share of the cluster's client connections) and a throttle alarm. `hsm:describe` routes
 * only get the cluster id: they stay outside the VPC, without reserved concurrency.
 */
export class RouteFunction extends Construct {
  readonly function: lambda.Function;

  constructor(
    scope: Construct,
    id: string,
    props: { route: Route; role: iam.IRole; tenantRole?: iam.IRole; code: lambda.Code; layer?: lambda.ILayerVersion; defaults: FunctionDefaults },
  ) {
    super(scope, id);
    const { route, role, tenantRole, code, layer, defaults } = props;
    const { settings } = defaults;
    const signing = route.grants.includes('hsm');
    const inVpc = signing && hsmConfigured(settings.hsm) && defaults.hsmSecurityGroupId !== undefined;

    this.function = new ServiceFunction(this, 'Service', {
      functionName: functionName(settings.name, route),
      description: route.key,
      handler: lambdaEntry(route).handler,
      role,
      code,
      settings,
      environment: {
        ...defaults.environment,
        ...(route.grants.includes('queue:send') ? defaults.queueEnvironment : {}),
        ...(route.grants.some((g) => g.startsWith('documents:')) ? defaults.documentsEnvironment : {}),
        ...(route.grants.includes('jobs:send') ? defaults.jobsEnvironment : {}),
        ...(route.grants.includes('audit:send') ? defaults.auditEnvironment : {}),
        ...(signing ? defaults.hsmEnvironment : {}),
        ...(route.grants.includes('hsm:describe') ? defaults.hsmDescribeEnvironment : {}),
        ...(usesKmsSigning(route.grants) ? { SIGNING_KMS_ENABLED: '1' } : {}),
        ...(route.grants.includes('payment') ? defaults.paymentEnvironment : {}),
        // tenant routes: the role assumed per account after authentication (lib/tenancy)
        ...(tenantRole ? { TENANT_ROLE_ARN: tenantRole.roleArn } : {}),
        // the integrator helpers answer only where the deployment turns them on (context mockRoutes)
        ...(settings.mockRoutes && route.path.startsWith('/api/v1/mock/') ? { MOCK_ROUTES_ENABLED: '1' } : {}),
      },
      // reserved only where signing runs: without the HSM the function answers 503 and must not
      // hold back account concurrency from every other function
      ...(inVpc ? { reservedConcurrency: defaults.hsmReservedConcurrency } : {}),
      ...(inVpc && layer ? { layers: [layer] } : {}),
      // The cluster's subnets (context; a cluster is not a CloudFormation resource) and the
      // signing functions' own security group, which the cluster's group admits on TCP
      // 2223-2225 (infra/api-stack.ts); the role carries the ENI permissions.
      ...(inVpc ? { vpc: { subnetIds: settings.hsm.subnetIds, securityGroupIds: [defaults.hsmSecurityGroupId!] } } : {}),
    }).function;

    if (signing && !inVpc) {
      Annotations.of(this).addWarningV2(
        'secrets-api:hsm-context',
        `${route.key} needs the CloudHSM cluster (missing context: ${missingHsmContext(settings.hsm).join(', ') || 'the signing security group'}): ` +
          'synthesized without VPC and PKCS#11 layer, so signing answers 503 until they are set',
      );
    }

    if (inVpc) {
      new cloudwatch.Alarm(this, 'Throttles', {
        alarmDescription: `${route.key}: throttled at its reserved concurrency (${defaults.hsmReservedConcurrency}, its share of the CloudHSM client connections).`,
        metric: this.function.metricThrottles({ period: Duration.minutes(5), statistic: 'Sum' }),
        threshold: 1,
        evaluationPeriods: 1,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      }).addAlarmAction(...alarmActions(this, settings));
    }
  }
}

const RETENTIONS = Object.values(logs.RetentionDays).filter((v): v is logs.RetentionDays => typeof v === 'number');

export function retentionDays(days: number): logs.RetentionDays {
  const match = RETENTIONS.find((r) => r === days);
  if (match === undefined) throw new Error(`context "logRetentionDays" must be one of ${RETENTIONS.filter((r) => r > 0).join(', ')}`);
  return match;
}
