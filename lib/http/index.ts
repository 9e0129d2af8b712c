export { defineHandler, type HandlerInput, type LambdaHandler } from './define-handler.js';
export * from '../core/errors.js';
export { ok, created, download, protocol, type Reply } from '../core/responses.js';
