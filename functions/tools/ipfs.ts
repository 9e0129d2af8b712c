import { defineHandler, ok } from '../../lib/http/index.js';
import { FetchBody, fetchContent, StoreBody, storeContent } from '../../lib/tools/ipfs.js';

/** Encrypted content on IPFS (lib/tools/ipfs.ts): the CID is the one an IPFS node computes for the encrypted bytes. */
export const store = defineHandler({
  body: StoreBody,
  async handler({ ctx, body }) {
    return ok(await storeContent(ctx, body));
  },
});

export const fetch = defineHandler({
  body: FetchBody,
  async handler({ ctx, body }) {
    return ok(await fetchContent(ctx, body));
  },
});
