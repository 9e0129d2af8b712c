import { HttpError, badGateway, internalError, serviceUnavailable, validationFailed } from '../core/errors.js';
import { BackendUnavailable, DeviceError, UnsupportedKeySpec } from './backend.js';

/**
 * Backend failures as HTTP errors (the spec's Errors table): a failing device → 502
 * `device_error`; a backend not configured or not installed here → 503 with the reason
 * (e.g. the SoftHSM2 install command); a key spec the backend cannot generate → 400.
 * The device's own message stays in the log (as the cause), never in the response.
 */
export function signingError(error: unknown): HttpError {
  if (error instanceof HttpError) return error;
  if (error instanceof DeviceError) return badGateway(`the ${error.backend} signing device failed; the operation was not performed`, error);
  if (error instanceof BackendUnavailable) return serviceUnavailable(`the ${error.backend} signing backend is unavailable: ${error.reason}`, error);
  if (error instanceof UnsupportedKeySpec) return validationFailed([{ path: 'body.algorithm', message: error.message }]);
  return internalError(error);
}
