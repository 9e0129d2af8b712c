import { Aws, NestedStack } from 'aws-cdk-lib';
import * as apigw from 'aws-cdk-lib/aws-apigateway';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import type { Construct } from 'constructs';
import type { Route } from '../lib/routes.js';
import { CodeAssets } from './code.js';
import type { RouteRoles } from './grants.js';
import { lambdaEntry } from './handlers.js';
import { routeId } from './naming.js';
import { RouteFunction, type FunctionDefaults } from './route-function.js';

export interface FamilyStackProps {
  readonly family: string;
  readonly routes: readonly Route[];
  /** The API's resource tree (owned by the parent stack), by path. */
  readonly resources: ReadonlyMap<string, apigw.IResource>;
  readonly roles: RouteRoles;
  readonly assetDir: string;
  readonly layer?: lambda.ILayerVersion;
  readonly defaults: FunctionDefaults;
  /**
   * CORS (context corsOrigins): the one preflight function of the API and the paths whose
   * OPTIONS method this family owns (each routed path has exactly one, in one family).
   */
  readonly cors?: { readonly preflight: lambda.IFunction; readonly paths: readonly string[] };
}

/**
 * One route family (Route.family): for each of its routes a function, the method on the
 * route's resource, integrated with that function (Lambda proxy), and the permission for
 * API Gateway to invoke it (4 CloudFormation resources per route; 5 for signing routes with
 * their throttle alarm). Grouping by family keeps it stable: adding a route adds resources
 * to its family's stack only, and never moves another route.
 */
export class FamilyStack extends NestedStack {
  readonly functions = new Map<string, lambda.Function>();
  readonly methods = new Map<string, apigw.Method>();
  /** CORS preflight (OPTIONS) methods by path. */
  readonly preflights = new Map<string, apigw.Method>();

  constructor(scope: Construct, id: string, props: FamilyStackProps) {
    super(scope, id, { description: `secrets API routes of the ${props.family} family` });
    const codes = new CodeAssets(props.assetDir);
    for (const route of props.routes) {
      const id = routeId(route);
      const fn = new RouteFunction(this, id, {
        route,
        role: props.roles.roleFor(route, this),
        tenantRole: props.roles.tenantRoleFor(route, this),
        code: codes.forHandler(lambdaEntry(route).handler),
        layer: props.layer,
        defaults: props.defaults,
      }).function;
      const resource = props.resources.get(route.path);
      if (!resource) throw new Error(`no API resource for ${route.path}`);
      const method = new apigw.Method(this, `${id}Method`, {
        resource,
        httpMethod: route.method,
        // Lambda proxy; the permission is scoped to this method and path on any stage. Test
        // invocations from the console use the same permission, so no second one is created.
        integration: new apigw.LambdaIntegration(fn, { proxy: true, allowTestInvoke: false }),
        options: {
          // Every route authenticates in its handler (lib/authn/authenticate.ts): API keys and
          // JWTs are checked against the table on each request, so revocation takes effect on
          // the very next call; public and endpoint routes have no gateway credential either.
          authorizationType: apigw.AuthorizationType.NONE,
          operationName: id,
        },
      });
      this.functions.set(route.key, fn);
      this.methods.set(route.key, method);
    }
    if (props.cors) this.addPreflights(props.cors.preflight, props.cors.paths, props.resources);
  }

  /**
   * An OPTIONS method on each path, integrated (Lambda proxy) with the API's one preflight
   * function. The integration is written out instead of using LambdaIntegration, which
   * would add a lambda permission per method: the API stack grants API Gateway one
   * permission for `/<stage>/OPTIONS/<any path>` instead. Here that costs one resource per
   * path and a single parameter (the function's ARN).
   */
  private addPreflights(preflight: lambda.IFunction, paths: readonly string[], resources: ReadonlyMap<string, apigw.IResource>): void {
    const integration = new apigw.Integration({
      type: apigw.IntegrationType.AWS_PROXY,
      integrationHttpMethod: 'POST',
      uri: `arn:${Aws.PARTITION}:apigateway:${Aws.REGION}:lambda:path/2015-03-31/functions/${preflight.functionArn}/invocations`,
    });
    for (const path of [...paths].sort()) {
      const resource = resources.get(path);
      if (!resource) throw new Error(`no API resource for ${path}`);
      // id from the path: adding a path never renames another preflight
      this.preflights.set(
        path,
        new apigw.Method(this, `Options ${path.replaceAll('/', '|')}`, {
          resource,
          httpMethod: 'OPTIONS',
          integration,
          // preflights carry no credentials (Fetch standard)
          options: { authorizationType: apigw.AuthorizationType.NONE },
        }),
      );
    }
  }
}
