import { defineHandler, ok } from '../../lib/http/index.js';
import { FetchBody, fetchContent, StoreBody, storeContent } from '../../lib/tools/ipfs.js';
import { IpfsFetched, IpfsStored } from '../../lib/tools/schemas.js';

/** Encrypted content on IPFS (lib/tools/ipfs.ts): the CID is the one an IPFS node computes for the encrypted bytes. */
export const store = defineHandler({
  summary: 'Store encrypted content on IPFS',
  description:
    'Encrypts the content (with the account’s key, or a key of your own) and adds it to IPFS; the CID is the one any IPFS node computes for the encrypted bytes.',
  responses: { 200: IpfsStored },
  errors: ['bad_request', 'service_unavailable', 'content_integrity_failed'],
  body: StoreBody,
  async handler({ ctx, body }) {
    return ok(await storeContent(ctx, body));
  },
});

export const fetch = defineHandler({
  summary: 'Fetch and decrypt content from IPFS',
  description: 'The content of a CID stored through this service, checked against its CID and decrypted.',
  responses: { 200: IpfsFetched },
  errors: ['bad_request', 'not_found', 'service_unavailable', 'content_integrity_failed'],
  body: FetchBody,
  async handler({ ctx, body }) {
    return ok(await fetchContent(ctx, body));
  },
});
