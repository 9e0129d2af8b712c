/**
 * Loaded into the local runtime by `npm run bench:cost` (NODE_OPTIONS=--import, so no
 * production code knows of it): counts every AWS SDK call the process makes, at the client.
 *
 * - Every SDK client's `send` (one Client class, @smithy/core/client) is wrapped: the
 *   service, the operation, when it started and answered, and for DynamoDB the capacity AWS
 *   would bill: the probe asks for ReturnConsumedCapacity TOTAL on every data-plane call (a
 *   response field only: what the call reads or writes is unchanged) and records the
 *   ConsumedCapacity it returns. A write refused by its condition returns none but is billed
 *   as a write in AWS: it is recorded as `refused` with 1 unit per item (at least what AWS bills).
 * - SQS ReceiveMessage answered with no message (idle long polling, a fixed cost in AWS) is
 *   recorded as such, apart from the receives that brought messages.
 * - The local keyring announces each KMS operation it stands in for on a diagnostics channel
 *   (lib/crypto/envelope.ts): recorded as KMS calls.
 *
 * - Every request the HTTP server answers: the process's CPU from its arrival to its response's
 *   end (service `HTTP`).
 *
 * Records are appended as JSON lines to COST_PROBE_FILE every 250 ms.
 *
 * A paced clock, for the busy-container run only (COST_CLOCK_FILE): `Date.now` of the process
 * runs F times slower than the real clock, F read from that file (written by the bench, 1 by
 * default). The limiter counts admissions per second of `Date.now` (lib/ratelimit/bucket.ts),
 * so N requests a real second are F × N a second as it sees them: a machine too loaded to
 * answer 20 requests a second still shows what the process does at that rate. Every call and
 * byte is still real and counted as above; the probe's own timestamps use the real clock.
 */
import { channel } from 'node:diagnostics_channel';
import { appendFileSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

const file = process.env.COST_PROBE_FILE;
if (file) {
  const require = createRequire(import.meta.url);
  const { Client } = require('@smithy/core/client');
  /** @type {Record<string, unknown>[]} */
  let pending = [];
  const flush = () => {
    if (pending.length === 0) return;
    const lines = `${pending.map((r) => JSON.stringify(r)).join('\n')}\n`;
    pending = [];
    appendFileSync(file, lines);
  };
  setInterval(flush, 250).unref();
  process.on('exit', flush);

  /** DynamoDB operations (the document client's names mapped to the service's) and whether they read or write. */
  const DYNAMO = {
    Get: 'read',
    GetItem: 'read',
    BatchGet: 'read',
    BatchGetItem: 'read',
    Query: 'read',
    Scan: 'read',
    TransactGet: 'read',
    TransactGetItems: 'read',
    Put: 'write',
    PutItem: 'write',
    Update: 'write',
    UpdateItem: 'write',
    Delete: 'write',
    DeleteItem: 'write',
    BatchWrite: 'write',
    BatchWriteItem: 'write',
    TransactWrite: 'write',
    TransactWriteItems: 'write',
  };
  const NATIVE = { Get: 'GetItem', Put: 'PutItem', Update: 'UpdateItem', Delete: 'DeleteItem', BatchGet: 'BatchGetItem', BatchWrite: 'BatchWriteItem', TransactGet: 'TransactGetItems', TransactWrite: 'TransactWriteItems' };
  const units = (consumed) => (Array.isArray(consumed) ? consumed : consumed ? [consumed] : []).reduce((n, c) => n + Number(c.CapacityUnits ?? 0), 0);
  const itemsOf = (op, input) =>
    op === 'TransactWriteItems' ? (input.TransactItems?.length ?? 1) : op === 'BatchWriteItem' ? Object.values(input.RequestItems ?? {}).flat().length : 1;

  const send = Client.prototype.send;
  Client.prototype.send = function probedSend(command, ...rest) {
    const service = String(this.config?.serviceId ?? this.constructor?.name ?? '?');
    const name = String(command?.constructor?.name ?? '?').replace(/Command$/, '');
    const kind = service === 'DynamoDB' ? DYNAMO[name] : undefined;
    const op = NATIVE[name] ?? name;
    if (kind && command.input && command.input.ReturnConsumedCapacity === undefined) command.input.ReturnConsumedCapacity = 'TOTAL';
    const start = performance.timeOrigin + performance.now();
    const record = (extra) => pending.push({ service, op, start, end: performance.timeOrigin + performance.now(), ...(kind ? { kind } : {}), ...extra });
    const out = send.call(this, command, ...rest);
    if (!out || typeof out.then !== 'function') return out;
    return out.then(
      (result) => {
        if (kind) record({ units: units(result?.ConsumedCapacity) });
        else if (service === 'SQS' && op === 'ReceiveMessage') record({ messages: result?.Messages?.length ?? 0 });
        else if (service === 'SQS' && op === 'SendMessageBatch') record({ messages: command.input?.Entries?.length ?? 0 });
        else record({});
        return result;
      },
      (error) => {
        const refused = /ConditionalCheckFailed|TransactionCanceled/.test(String(error?.name));
        if (kind === 'write' && refused) record({ refused: true, units: itemsOf(op, command.input ?? {}) });
        else record({ error: String(error?.name ?? 'Error'), ...(kind ? { units: 0 } : {}) });
        throw error;
      },
    );
  };

  // The CPU of each request the runtime's HTTP server answers, from its arrival to its
  // response's end (process.cpuUsage: the process's user + system time, in microseconds, every
  // thread). One request at a time, that is the request's own work: an idle process's polling
  // falls in a window only for as long as the request lasts, not for the pause between two
  // requests, which on a quiet account is most of the time.
  const { Server } = require('node:http');
  const emit = Server.prototype.emit;
  Server.prototype.emit = function probedEmit(event, request, response) {
    // the gateway's server only (PORT), not the in-process S3/SQS engine's
    if (event === 'request' && response && this.address()?.port === Number(process.env.PORT)) {
      const start = performance.timeOrigin + performance.now();
      const cpu0 = process.cpuUsage();
      response.once('finish', () => {
        const spent = process.cpuUsage(cpu0);
        pending.push({ service: 'HTTP', op: 'request', start, end: performance.timeOrigin + performance.now(), cpuUs: spent.user + spent.system });
      });
    }
    return emit.apply(this, arguments);
  };

  channel('secrets-api:local-kms').subscribe((message) => {
    const at = performance.timeOrigin + performance.now();
    pending.push({ service: 'KMS', op: String(message?.operation ?? '?'), start: at, end: at, local: true });
  });
}

const clockFile = process.env.COST_CLOCK_FILE;
if (clockFile) {
  const realNow = Date.now.bind(Date);
  let anchorReal = realNow();
  let anchorVirtual = anchorReal;
  let factor = 1;
  const virtualNow = () => anchorVirtual + (realNow() - anchorReal) / factor;
  Date.now = () => Math.floor(virtualNow());
  setInterval(() => {
    let f;
    try {
      f = Number(readFileSync(clockFile, 'utf8'));
    } catch {
      return;
    }
    if (!(f >= 1) || f === factor) return;
    anchorVirtual = virtualNow();
    anchorReal = realNow();
    factor = f;
  }, 100).unref();
}
