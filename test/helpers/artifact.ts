/** The CDK context the artifact project synthesizes with, on top of the local CloudHSM context. */
export const ARTIFACT_CORS_ORIGIN = 'https://app.example.test';
export const ARTIFACT_CONTEXT = { corsOrigins: ARTIFACT_CORS_ORIGIN };

/** Where the artifact runtime writes its control server's address, in its data directory (test/setup/runtime.ts). */
export const ARTIFACT_CONTROL_FILE = 'artifact-control.json';
