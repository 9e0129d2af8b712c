import { ApiError, OAuthError, UnexpectedResponseError } from '../client/index.js';
import { CliError } from './api.js';

/** What each failure tells the user: one line, with what to do. */
export function describeError(error: unknown, apiUrl?: string): string {
  if (error instanceof CliError) return error.message;
  if (error instanceof ApiError) {
    const hint: Partial<Record<string, string>> = {
      unauthorized: 'run `secrets login` again (or check SECRETS_API_KEY)',
      insufficient_scope: 'use a credential with that scope',
      stale_etag: 'it changed since you read it: read it again and retry',
      not_found: 'check the name (`secrets secrets list`)',
    };
    const extra = hint[String(error.code)];
    return `${error.error}${extra ? `: ${extra}` : ''} (${String(error.code)}, request ${error.request_id})`;
  }
  if (error instanceof OAuthError) return `${error.error_description ?? error.error} (${error.error})`;
  if (error instanceof UnexpectedResponseError) return `unexpected answer from the API (HTTP ${error.status}): check SECRETS_API_URL`;
  const code = (error as { cause?: { code?: string } })?.cause?.code;
  if (error instanceof TypeError && /fetch failed/.test(error.message))
    return `cannot reach ${apiUrl ?? 'the API'}${code ? ` (${code})` : ''}: check SECRETS_API_URL and your network`;
  return error instanceof Error ? error.message : String(error);
}

/** A spinner on stderr while a long operation runs (only on a terminal: scripts see nothing). */
export function progress(label: string, stream: NodeJS.WriteStream = process.stderr): { stop(final?: string): void } {
  if (!stream.isTTY) return { stop: () => undefined };
  const frames = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];
  let i = 0;
  const timer = setInterval(() => stream.write(`\r${frames[i++ % frames.length]} ${label}`), 100);
  return {
    stop(final) {
      clearInterval(timer);
      stream.write(`\r\x1b[K${final ? `${final}\n` : ''}`);
    },
  };
}
