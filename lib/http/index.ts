export { defineHandler, type HandlerInput, type LambdaHandler } from './define-handler.js';
export * from './errors.js';
export { ok, created, download, protocol, type Reply } from './responses.js';
