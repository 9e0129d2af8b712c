import { createHash } from 'node:crypto';
import { Annotations, Aws, CfnOutput, Duration, NestedStack, RemovalPolicy, Stack, type StackProps } from 'aws-cdk-lib';
import * as apigw from 'aws-cdk-lib/aws-apigateway';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as wafv2 from 'aws-cdk-lib/aws-wafv2';
import * as xray from 'aws-cdk-lib/aws-xray';
import { acknowledge } from './nag.js';
import type { Construct } from 'constructs';
import type { Route } from '../lib/routes.js';
import { alarmActions, familyAlarms } from './alarms.js';
import { ServiceDashboard } from './dashboard.js';
import { BACKGROUND_JOBS, BackgroundStack, type BackgroundJob } from './background.js';
import type { DataStack } from './data-stack.js';
import { CodeAssets } from './code.js';
import { FamilyStack } from './family-stack.js';
import { GATEWAY_RESPONSES, gatewayResponseOptions } from './gateway-responses.js';
import { RouteRoles } from './grants.js';
import { CORS_PREFLIGHT } from './handlers.js';
import { assertUnique, familyId, functionName, routeId } from './naming.js';
import { ARCHITECTURE, RUNTIME, retentionDays, ServiceFunction, type FunctionDefaults } from './route-function.js';
import { hsmConfigured, missingHsmContext, type Settings } from './settings.js';
import { methodSettings } from './throttling.js';

export interface ApiStackProps extends StackProps {
  readonly settings: Settings;
  readonly data: DataStack;
  readonly routes: readonly Route[];
  /** The code assets built by infra/bundle.ts. */
  readonly assetDir: string;
  readonly serviceVersion: string;
  /** Background functions (default: infra/background.ts BACKGROUND_JOBS). */
  readonly jobs?: readonly BackgroundJob[];
}

/**
 * Bump when something that API Gateway only picks up on a new deployment changes in a way
 * the hash below cannot see (method options, integration settings).
 */
const API_SHAPE_VERSION = 2;

/**
 * The REST API: one method per route, each integrated with its own function.
 *
 * Layout, chosen for CloudFormation's limits (500 resources per template, 200 parameters):
 * - this stack: the RestApi, its resource tree (one AWS::ApiGateway::Resource per path
 *   segment, ~290), the shared roles, gateway responses, deployment, stage, access logs,
 *   WAF association and alarms;
 * - one nested stack per route family: functions, log groups, methods, permissions, and
 *   with CORS configured the OPTIONS methods of the family's paths;
 * - with CORS configured, the one preflight function those OPTIONS methods integrate, and
 *   one permission for API Gateway to invoke it on `OPTIONS` of any path.
 */
export class ApiStack extends Stack {
  readonly api: apigw.RestApi;
  readonly stage: apigw.Stage;
  readonly families = new Map<string, FamilyStack>();
  readonly background: BackgroundStack;
  readonly dashboard: cloudwatch.Dashboard;
  readonly url: string;

  constructor(scope: Construct, id: string, props: ApiStackProps) {
    super(scope, id, props);
    const { settings, data, routes } = props;
    assertUnique(routes, (r) => r.key, 'route key');
    assertUnique(routes, routeId, 'construct id');
    assertUnique(routes, (r) => functionName(settings.name, r), 'function name');

    this.api = new apigw.RestApi(this, 'Api', {
      restApiName: settings.name,
      description: 'secrets and credentials API: one Lambda function per route',
      deploy: false,
      endpointConfiguration: { types: [apigw.EndpointType.REGIONAL] },
      cloudWatchRole: settings.apiGatewayCloudWatchRole,
      // CDK refuses a removal policy without the role it applies to (context apiGatewayCloudWatchRole=false)
      ...(settings.apiGatewayCloudWatchRole ? { cloudWatchRoleRemovalPolicy: RemovalPolicy.RETAIN } : {}),
    });

    // The resource tree: every path of the route table, with its intermediate segments.
    const resources = new Map<string, apigw.IResource>([['/', this.api.root]]);
    for (const path of [...new Set(routes.map((r) => r.path))].sort()) {
      if (path !== '/') resources.set(path, this.api.root.resourceForPath(path));
    }

    // the role pairs of the self-identifying routes with own items (one pair per route) live in
    // their route's family stack, beside its function (infra/grants.ts tenantRolesFor): the parent
    // template is near CloudFormation's 500 resources
    const roles = new RouteRoles(this, 'Roles', { routes, targets: data, settings });

    const stageUrl = `https://${this.api.restApiId}.execute-api.${Aws.REGION}.${Aws.URL_SUFFIX}/${settings.stage}`;
    this.url = settings.publicBaseUrl ?? stageUrl;
    const hsmRoutes = routes.filter((r) => r.grants.includes('hsm'));
    const hsm = hsmConfigured(settings.hsm);
    const signingSecurityGroup = hsm && hsmRoutes.length > 0 ? this.signingSecurityGroup(settings) : undefined;
    const defaults: FunctionDefaults = {
      settings,
      environment: {
        TABLE_NAME: data.table.tableName,
        KEY_PROVIDER: 'kms',
        KMS_KEY_ID: data.key.keyArn,
        QUEUE_PROVIDER: 'sqs',
        SERVICE_NAME: settings.name,
        // lib/core/metrics.ts: the service's metrics under the deployment's name (infra/alarms.ts reads them there)
        POWERTOOLS_METRICS_NAMESPACE: settings.name,
        POWERTOOLS_SERVICE_NAME: settings.name,
        SERVICE_VERSION: props.serviceVersion,
        PUBLIC_BASE_URL: this.url,
        ...(settings.sourceMaps ? { NODE_OPTIONS: '--enable-source-maps' } : {}),
        // The KMS asymmetric signing backend only where the route declares `kms:sign`
        // (infra/grants.ts); elsewhere it reports itself unavailable instead of failing on
        // AccessDenied.
        SIGNING_KMS_ENABLED: '0',
        ...(settings.corsOrigins.length ? { CORS_ALLOWED_ORIGINS: settings.corsOrigins.join(',') } : {}),
        ...(settings.ipfsApiUrl ? { IPFS_API_URL: settings.ipfsApiUrl } : {}),
        ...(settings.breachRangeUrl ? { BREACH_RANGE_URL: settings.breachRangeUrl } : {}),
      },
      queueEnvironment: { WEBHOOK_QUEUE_URL: data.queue.queueUrl },
      documentsEnvironment: { DOCUMENTS_BUCKET: data.documents.bucketName },
      jobsEnvironment: { JOBS_QUEUE_URL: data.jobsQueue.queueUrl },
      auditEnvironment: { AUDIT_QUEUE_URL: data.auditQueue.queueUrl },
      // Names of lib/config.ts (PKCS#11 signing). One session per process: a Lambda instance
      // serves one request at a time.
      // The HSM addresses are not configuration: each signing function looks them up at start
      // (CLOUDHSM_CLUSTER_ID, lib/signing/cloudhsm.ts), so a replaced HSM needs no deployment.
      hsmEnvironment: hsm
        ? {
            PKCS11_MODULE: settings.hsm.libraryPath,
            PKCS11_TOKEN_LABEL: settings.hsm.tokenLabel,
            PKCS11_POOL_SIZE: '1',
            CLOUDHSM_CLUSTER_ID: settings.hsm.clusterId!,
            CLOUDHSM_CLIENT_CONFIG: settings.hsm.clientConfigPath,
            ...(settings.hsm.pinSecretArn ? { PKCS11_PIN_SECRET_ID: settings.hsm.pinSecretArn } : {}),
          }
        : {},
      paymentEnvironment: settings.paymentSecretArn ? { PAYMENT_PROVIDER: 'stripe', PAYMENT_SECRET_ID: settings.paymentSecretArn } : {},
      hsmDescribeEnvironment: hsm ? { CLOUDHSM_CLUSTER_ID: settings.hsm.clusterId!, PKCS11_TOKEN_LABEL: settings.hsm.tokenLabel } : {},
      ...(signingSecurityGroup ? { hsmSecurityGroupId: signingSecurityGroup.attrGroupId } : {}),
      hsmReservedConcurrency: Math.max(1, Math.floor(settings.hsm.connectionBudget / Math.max(1, hsmRoutes.length))),
    };

    let layer: lambda.ILayerVersion | undefined;
    if (hsmRoutes.length > 0 && hsm) {
      layer = new lambda.LayerVersion(this, 'CloudHsmPkcs11Layer', {
        description: 'CloudHSM Client SDK 5 PKCS#11 library (/opt/cloudhsm) and pkcs11js (/opt/nodejs/node_modules)',
        code: lambda.Code.fromAsset(settings.hsm.layerPath!),
        compatibleRuntimes: [RUNTIME],
        compatibleArchitectures: [ARCHITECTURE],
      });
    } else if (hsmRoutes.length > 0) {
      const message =
        `${hsmRoutes.length} signing route(s) need the CloudHSM context; missing: ${missingHsmContext(settings.hsm).map((k) => `-c ${k}=…`).join(' ')} ` +
        '(docs/deployment.md, CloudHSM); without it their functions run outside the VPC without the PKCS#11 layer and signing answers 503';
      if (settings.hsm.required) throw new Error(`requireHsm: ${message}`);
      Annotations.of(this).addWarningV2('secrets-api:hsm-context-missing', message);
    }

    // One nested stack per family, in a stable order.
    const byFamily = new Map<string, Route[]>();
    for (const route of routes) byFamily.set(route.family, [...(byFamily.get(route.family) ?? []), route]);
    const preflight = settings.corsOrigins.length > 0 ? this.preflightFunction(settings, roles, props.assetDir, defaults) : undefined;
    const corsPaths = preflight ? preflightPaths(routes) : new Map<string, string[]>();
    for (const family of [...byFamily.keys()].sort()) {
      const stack = new FamilyStack(this, `Family${familyId(family)}`, {
        family,
        routes: byFamily.get(family)!,
        resources,
        roles,
        assetDir: props.assetDir,
        layer,
        defaults,
        ...(preflight ? { cors: { preflight, paths: corsPaths.get(family) ?? [] } } : {}),
      });
      this.families.set(family, stack);
      acknowledge(stack, [
        {
          id: 'AwsSolutions-APIG4',
          reason: 'Every route authenticates in its handler (API keys and JWTs checked against the table on each request, so revocation is immediate; public routes need none). A gateway authorizer would duplicate that logic, and its cache would delay revocation.',
        },
        { id: 'AwsSolutions-COG4', reason: 'Credentials are the service\'s own API keys and JWTs, verified by the handler; there is no Cognito user pool.' },
      ]);
    }

    this.background = new BackgroundStack(this, 'Background', {
      jobs: props.jobs ?? BACKGROUND_JOBS,
      targets: data,
      streamFailureQueue: data.streamFailureQueue,
      settings,
      assetDir: props.assetDir,
      environment: defaults.environment,
    });

    // A gateway response is static: it can name one origin, never echo the request's. With
    // several origins configured, API Gateway's own errors (404 of an unknown path, 429,
    // 413, WAF 403) carry no CORS header and a page sees them as network errors.
    const gatewayOrigin = settings.corsOrigins.length === 1 ? settings.corsOrigins[0] : undefined;
    for (const response of GATEWAY_RESPONSES) {
      this.api.addGatewayResponse(`Response${response.type}`, gatewayResponseOptions(response, gatewayOrigin));
    }

    // A deployment whose logical id changes whenever the API's shape changes, so the stage is
    // redeployed exactly then (methods live in nested stacks, which RestApi's own automatic
    // deployment cannot see). Functions' code updates need no redeployment.
    const deployment = new apigw.Deployment(this, 'Deployment', { api: this.api, description: `${routes.length} routes` });
    deployment.addToLogicalId(
      createHash('sha256')
        .update(
          JSON.stringify({
            version: API_SHAPE_VERSION,
            routes: routes.map((r) => [r.key, r.family, functionName(settings.name, r)]).sort(),
            responses: GATEWAY_RESPONSES,
            cors: settings.corsOrigins,
          }),
        )
        .digest('hex'),
    );
    for (const stack of this.families.values()) deployment.node.addDependency(stack);

    // Infrequent Access: half the ingestion price of Standard ($0.25 against $0.50 per GB; the
    // access line is about 380 bytes a request, docs/cost.md). This group needs none of what the
    // class lacks (metric and subscription filters, EMF extraction, Live Tail); Logs Insights
    // queries it. A class is fixed at creation: on an existing deployment CloudFormation
    // replaces the group (the old one is kept or deleted by the removal policy below).
    const accessLogs = new logs.LogGroup(this, 'AccessLogs', {
      logGroupClass: logs.LogGroupClass.INFREQUENT_ACCESS,
      retention: retentionDays(settings.logRetentionDays),
      removalPolicy: settings.retainLogs ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY,
    });
    this.stage = new apigw.Stage(this, 'Stage', {
      deployment,
      stageName: settings.stage,
      description: `${settings.name} ${settings.stage}`,
      tracingEnabled: true,
      accessLogDestination: new apigw.LogGroupLogDestination(accessLogs),
      // The route template ($context.resourcePath), never the raw path: temporary-access
      // tokens travel in the path (/api/v1/t/{token}) and must not reach a log.
      accessLogFormat: apigw.AccessLogFormat.custom(
        JSON.stringify({
          request_id: '$context.requestId',
          time: '$context.requestTimeEpoch',
          ip: '$context.identity.sourceIp',
          user_agent: '$context.identity.userAgent',
          method: '$context.httpMethod',
          route: '$context.resourcePath',
          status: '$context.status',
          response_bytes: '$context.responseLength',
          latency_ms: '$context.responseLatency',
          integration_latency_ms: '$context.integrationLatency',
          integration_status: '$context.integration.status',
          error_type: '$context.error.responseType',
          waf: '$context.waf.status',
          xray_trace_id: '$context.xrayTraceId',
        }),
      ),
    });
    // Execution logs for errors only (data tracing would log request and response bodies,
    // i.e. secret values), and throttling per route group (infra/throttling.ts): written as
    // the stage's MethodSettings, since one entry per differing route is needed.
    (this.stage.node.defaultChild as apigw.CfnStage).methodSettings = methodSettings(routes, settings.throttling, {
      loggingLevel: apigw.MethodLoggingLevel.ERROR,
      dataTraceEnabled: false,
      metricsEnabled: false,
    }, hsm && signingSecurityGroup ? defaults.hsmReservedConcurrency : undefined);

    this.samplingRule(settings);

    if (settings.wafWebAclArn) {
      new wafv2.CfnWebACLAssociation(this, 'WebAcl', { resourceArn: this.stage.stageArn, webAclArn: settings.wafWebAclArn });
    } else {
      acknowledge(this.stage, [
        { id: 'AwsSolutions-APIG3', reason: 'WAF is optional here: set context wafWebAclArn to associate a REGIONAL web ACL with the stage.' },
      ]);
    }

    this.alarms(settings, routes.length);
    // per family p99 latency and 5xx rate alarms and the dashboard, in a nested stack of their
    // own (two alarms per family would crowd this template's resource budget)
    const observability = new NestedStack(this, 'Observability', { description: `${settings.name}: per-family alarms and the service dashboard` });
    const families = [...new Set(routes.map((r) => r.family))].sort();
    const familyAlarmList = familyAlarms(observability, settings, families);
    this.dashboard = new ServiceDashboard(observability, 'Service', { settings, families, alarms: familyAlarmList }).dashboard;
    if (layer && settings.hsm.clusterId) {
      new cloudwatch.Alarm(this, 'HsmUnhealthy', {
        alarmDescription: `CloudHSM cluster ${settings.hsm.clusterId} reports an unhealthy HSM (signing depends on it).`,
        metric: new cloudwatch.Metric({ namespace: 'AWS/CloudHSM', metricName: 'HsmUnhealthy', dimensionsMap: { ClusterId: settings.hsm.clusterId }, statistic: 'Maximum', period: Duration.minutes(5) }),
        threshold: 1,
        evaluationPeriods: 1,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      }).addAlarmAction(...alarmActions(this, settings));
    }

    acknowledge(this.api, [
      {
        id: 'AwsSolutions-APIG2',
        reason: 'Requests are validated by each handler\'s zod schemas (lib/http/define-handler.ts), which answer 400 with field details in the service\'s error envelope; gateway validation would answer in another shape.',
      },
    ]);
    if (this.api.node.tryFindChild('CloudWatchRole')) {
      acknowledge(
        this.api.node.findChild('CloudWatchRole'),
        [
          {
            id: 'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AmazonAPIGatewayPushToCloudWatchLogs]',
            reason: 'The account-level role API Gateway uses to write access and execution logs; AmazonAPIGatewayPushToCloudWatchLogs is the AWS-maintained policy for exactly that.',
          },
        ],
      );
    }

    new CfnOutput(this, 'ApiUrl', { value: stageUrl, description: 'Base URL of the stage' });
    new CfnOutput(this, 'RestApiId', { value: this.api.restApiId });
  }

  /**
   * The signing functions' security group, in the cluster's VPC: out to the cluster's
   * security group on TCP 2223-2225 (the CloudHSM client's ports) and to HTTPS for the AWS
   * APIs (DynamoDB, KMS, Secrets Manager, CloudHSM, X-Ray, through VPC endpoints or a NAT
   * gateway); nothing else, and nothing in. DNS to the VPC resolver is not subject to
   * security groups. The cluster's own group (CloudHSM creates it) gets the matching ingress
   * rule, so the deployment is complete without a hand-made rule.
   */
  private signingSecurityGroup(settings: Settings): ec2.CfnSecurityGroup {
    const clusterGroup = settings.hsm.securityGroupId!;
    const group = new ec2.CfnSecurityGroup(this, 'SigningSecurityGroup', {
      vpcId: settings.hsm.vpcId!,
      groupDescription: `${settings.name} signing functions: CloudHSM cluster (TCP 2223-2225) and AWS APIs (HTTPS)`,
      securityGroupEgress: [
        { ipProtocol: 'tcp', fromPort: 2223, toPort: 2225, destinationSecurityGroupId: clusterGroup, description: 'CloudHSM cluster' },
        { ipProtocol: 'tcp', fromPort: 443, toPort: 443, cidrIp: '0.0.0.0/0', description: 'AWS APIs through VPC endpoints or NAT' },
      ],
    });
    new ec2.CfnSecurityGroupIngress(this, 'HsmIngressFromSigning', {
      groupId: clusterGroup,
      ipProtocol: 'tcp',
      fromPort: 2223,
      toPort: 2225,
      sourceSecurityGroupId: group.attrGroupId,
      description: `${settings.name} signing functions`,
    });
    return group;
  }

  /**
   * The CORS preflight function (functions/public/cors.ts): the shared environment (it reads
   * CORS_ALLOWED_ORIGINS), the role without grants, and ONE permission for API Gateway to
   * invoke it as `OPTIONS` on any path of any stage of this API.
   */
  private preflightFunction(settings: Settings, roles: RouteRoles, assetDir: string, defaults: FunctionDefaults): lambda.IFunction {
    const fn = new ServiceFunction(this, 'CorsPreflight', {
      functionName: `${settings.name}-cors-preflight`,
      description: 'CORS preflight: OPTIONS on every path (lib/http/cors.ts)',
      handler: CORS_PREFLIGHT,
      role: roles.ownRole([]),
      code: new CodeAssets(assetDir).forHandler(CORS_PREFLIGHT),
      settings,
      environment: defaults.environment,
      timeout: Duration.seconds(10),
    }).function;
    fn.addPermission('ApiGatewayOptions', {
      principal: new iam.ServicePrincipal('apigateway.amazonaws.com'),
      sourceArn: this.api.arnForExecuteApi('OPTIONS', '/*', '*'),
    });
    return fn;
  }

  /**
   * The stage's own X-Ray sampling rule. API Gateway makes the sampling decision for a traced
   * stage from the account's rules (matched on the service name `<api>/<stage>`) and passes it
   * on in the trace header; the functions' active tracing follows an upstream decision, so this
   * one rule sets the share of requests recorded end to end. Without it X-Ray's default rule
   * (one a second, then 5 %) applies. Priority 1000 sits before the default (10000) and leaves
   * room for an operator's narrower rules. The name is unique per deployment (name and stage),
   * within X-Ray's 32 characters.
   */
  private samplingRule(settings: Settings): void {
    const serviceName = `${settings.name}/${settings.stage}`;
    const suffix = createHash('sha256').update(serviceName).digest('hex').slice(0, 7);
    new xray.CfnSamplingRule(this, 'SamplingRule', {
      samplingRule: {
        ruleName: `${settings.name}-${suffix}`,
        priority: 1000,
        fixedRate: settings.xraySampleRate,
        reservoirSize: settings.xrayReservoir,
        serviceName,
        serviceType: 'AWS::ApiGateway::Stage',
        host: '*',
        httpMethod: '*',
        urlPath: '*',
        resourceArn: '*',
        version: 1,
      },
    });
  }

  private alarms(settings: Settings, routeCount: number): void {
    const dims = { ApiName: settings.name, Stage: settings.stage };
    const actions = alarmActions(this, settings);
    new cloudwatch.Alarm(this, 'Api5xxRate', {
      alarmDescription: `More than 5% of requests to the ${routeCount} routes answered 5xx for 15 minutes.`,
      metric: new cloudwatch.Metric({ namespace: 'AWS/ApiGateway', metricName: '5XXError', dimensionsMap: dims, statistic: 'Average', period: Duration.minutes(5) }),
      threshold: 0.05,
      evaluationPeriods: 3,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    }).addAlarmAction(...actions);
    new cloudwatch.Alarm(this, 'LambdaThrottles', {
      alarmDescription:
        'Lambda throttled invocations in this account and region (the metric without dimensions; one alarm per function would add 322 resources). Signing functions also have their own.',
      metric: new cloudwatch.Metric({ namespace: 'AWS/Lambda', metricName: 'Throttles', statistic: 'Sum', period: Duration.minutes(5) }),
      threshold: 10,
      evaluationPeriods: 1,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    }).addAlarmAction(...actions);
  }
}

/**
 * Which family's nested stack holds the OPTIONS method of each path: the path's routes'
 * family that sorts first (a path shared by two families gets one preflight, not two).
 */
export function preflightPaths(routes: readonly Route[]): Map<string, string[]> {
  const owner = new Map<string, string>();
  for (const r of routes) {
    const current = owner.get(r.path);
    if (current === undefined || r.family < current) owner.set(r.path, r.family);
  }
  const byFamily = new Map<string, string[]>();
  for (const [path, family] of owner) byFamily.set(family, [...(byFamily.get(family) ?? []), path]);
  return byFamily;
}
