import { NestedStack } from 'aws-cdk-lib';
import * as apigw from 'aws-cdk-lib/aws-apigateway';
import { acknowledge } from './nag.js';
import type { Construct } from 'constructs';
import type { Route } from '../lib/routes.js';

/** Headers a browser client may send, and those it may read. */
const ALLOW_HEADERS = ['Authorization', 'Content-Type', 'If-Match', 'Idempotency-Key'];
const EXPOSE_HEADERS = ['ETag', 'X-Request-Id', 'Retry-After', 'Idempotent-Replayed'];

/**
 * CORS preflight (only when context corsOrigins is set): an OPTIONS method with a mock
 * integration on every path that has routes, answering 204 with the allowed origin (echoed
 * when it is one of the configured origins), the path's methods and the allowed headers.
 * They live in their own nested stack: ~240 more methods would not fit the parent template.
 * The functions receive CORS_ALLOWED_ORIGINS for the headers of actual responses.
 */
export class CorsStack extends NestedStack {
  readonly methods: apigw.Method[] = [];

  constructor(scope: Construct, id: string, props: { routes: readonly Route[]; resources: ReadonlyMap<string, apigw.IResource>; origins: readonly string[] }) {
    super(scope, id, { description: 'CORS preflight methods of the secrets API' });
    const methodsByPath = new Map<string, string[]>();
    for (const r of props.routes) methodsByPath.set(r.path, [...(methodsByPath.get(r.path) ?? []), r.method]);
    const [first] = props.origins;
    const echo =
      props.origins.length > 1
        ? [
            '#set($origin = $input.params().header.get("Origin"))',
            '#if($origin == "")#set($origin = $input.params().header.get("origin"))#end',
            `#if(${props.origins.map((o) => `$origin == "${o}"`).join(' || ')})`,
            '#set($context.responseOverride.header.Access-Control-Allow-Origin = $origin)',
            '#end',
          ].join('\n')
        : '';
    for (const [path, methods] of [...methodsByPath].sort(([a], [b]) => a.localeCompare(b))) {
      const resource = props.resources.get(path);
      if (!resource) throw new Error(`no API resource for ${path}`);
      const headers = {
        'method.response.header.Access-Control-Allow-Origin': `'${first}'`,
        'method.response.header.Access-Control-Allow-Methods': `'${[...methods, 'OPTIONS'].join(',')}'`,
        'method.response.header.Access-Control-Allow-Headers': `'${ALLOW_HEADERS.join(',')}'`,
        'method.response.header.Access-Control-Expose-Headers': `'${EXPOSE_HEADERS.join(',')}'`,
        'method.response.header.Access-Control-Max-Age': "'600'",
        'method.response.header.Vary': "'Origin'",
      };
      this.methods.push(
        // id from the path: adding a path never renames another preflight
        new apigw.Method(this, `Options ${path.replaceAll('/', '|')}`, {
          resource,
          httpMethod: 'OPTIONS',
          integration: new apigw.MockIntegration({
            requestTemplates: { 'application/json': '{ "statusCode": 204 }' },
            integrationResponses: [{ statusCode: '204', responseParameters: headers, responseTemplates: { 'application/json': echo } }],
          }),
          options: {
            authorizationType: apigw.AuthorizationType.NONE,
            methodResponses: [{ statusCode: '204', responseParameters: Object.fromEntries(Object.keys(headers).map((h) => [h, true])) }],
          },
        }),
      );
    }
    acknowledge(this, [
      { id: 'AwsSolutions-APIG4', reason: 'CORS preflight requests carry no credentials by definition (Fetch standard).' },
      { id: 'AwsSolutions-COG4', reason: 'CORS preflight requests carry no credentials by definition (Fetch standard).' },
    ]);
  }
}
