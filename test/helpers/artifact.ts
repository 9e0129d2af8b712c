/** The CDK context the artifact project synthesizes with, on top of the local CloudHSM context. */
export const ARTIFACT_CORS_ORIGIN = 'https://app.example.test';
export const ARTIFACT_CONTEXT = { corsOrigins: ARTIFACT_CORS_ORIGIN };
