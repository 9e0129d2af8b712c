import { Validations } from 'aws-cdk-lib';
import type { IConstruct } from 'constructs';
// cdk-nag is CommonJS whose exports Node's ESM loader cannot detect statically.
import nag from 'cdk-nag';

/**
 * cdk-nag v3 runs as a CDK policy-validation plugin: any finding that is not acknowledged
 * interrupts synthesis (and the report lands in the cloud assembly). Every acknowledgment
 * carries its reason, next to the resource it concerns. A finding with a detail (IAM5) is
 * acknowledged as `AwsSolutions-IAM5[Resource::*]`.
 */
export function addAwsSolutionsChecks(app: IConstruct): void {
  Validations.of(app).addPlugins(new nag.AwsSolutionsChecks(app, { verbose: true }));
}

export interface Acknowledgment {
  readonly id: string;
  readonly reason: string;
}

export function acknowledge(scope: IConstruct, rules: readonly Acknowledgment[]): void {
  Validations.of(scope).acknowledge(...rules);
}
