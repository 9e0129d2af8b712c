/**
 * The port semantic search ranks through, and its local implementation.
 *
 * A ranker receives the query and the caller's searchable documents — names, descriptions,
 * tags and types, never values — and returns them scored, best first. The local ranker is
 * TF-IDF over character n-grams (cosine similarity): it needs no model download and catches
 * spelling variants and partial words ("postgres" finds "postgresql-prod", "certs" finds
 * "certificate"), but it is lexical, not semantic: it does not know that "database" and
 * "postgres" are related. An embeddings backend (e.g. Amazon Bedrock Titan Text Embeddings)
 * fills the same port in AWS by embedding the documents and the query and ranking by cosine
 * similarity; none is wired in this build.
 */
export interface SearchDocument {
  readonly type: string;
  readonly id: string;
  readonly name: string;
  readonly description: string;
  readonly tags: readonly string[];
  readonly container_id: string | null;
}

interface RankedDocument {
  readonly doc: SearchDocument;
  /** Cosine similarity in [0, 1]. */
  readonly score: number;
}

export interface SearchRanker {
  /** Reported with the results, so a client knows what produced the scores. */
  readonly name: string;
  rank(query: string, docs: readonly SearchDocument[], limit: number): Promise<RankedDocument[]>;
}

const N = 3;
/** Scores below this are incidental n-gram overlaps (a shared suffix), not matches. */
const MIN_SCORE = 0.05;

/** Lower-case, accents folded, camelCase and separators split into words. */
export function words(text: string): string[] {
  return text
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter((w) => w.length > 0);
}

/** A term-count bag: whole words (weighted up) and the character n-grams of each padded word. */
function bag(text: string, weight: number, into = new Map<string, number>()): Map<string, number> {
  const add = (term: string, w: number) => into.set(term, (into.get(term) ?? 0) + w);
  for (const word of words(text)) {
    add(`w:${word}`, 2 * weight);
    const padded = ` ${word} `;
    if (padded.length <= N) add(`g:${padded}`, weight);
    for (let i = 0; i + N <= padded.length; i++) add(`g:${padded.slice(i, i + N)}`, weight);
  }
  return into;
}

/** The fields of a document as one bag: the name counts most, then tags, description, type. */
function docBag(d: SearchDocument): Map<string, number> {
  const b = bag(d.name, 3);
  bag(d.tags.join(' '), 2, b);
  bag(d.description, 1, b);
  bag(d.type.replace(/_/g, ' '), 1, b);
  return b;
}

type Vector = Map<string, number>;

function weigh(counts: Map<string, number>, idf: Map<string, number>, fallbackIdf: number): Vector {
  const v: Vector = new Map();
  let norm = 0;
  for (const [term, c] of counts) {
    // sublinear term frequency, smoothed inverse document frequency (as scikit-learn's TfidfVectorizer)
    const w = (1 + Math.log(c)) * (idf.get(term) ?? fallbackIdf);
    v.set(term, w);
    norm += w * w;
  }
  norm = Math.sqrt(norm);
  if (norm > 0) for (const [t, w] of v) v.set(t, w / norm);
  return v;
}

function cosine(a: Vector, b: Vector): number {
  const [small, large] = a.size < b.size ? [a, b] : [b, a];
  let s = 0;
  for (const [t, w] of small) {
    const o = large.get(t);
    if (o !== undefined) s += w * o;
  }
  return s;
}

export const tfidfRanker: SearchRanker = {
  name: 'tfidf-char-3gram',
  async rank(query, docs, limit) {
    const bags = docs.map(docBag);
    const df = new Map<string, number>();
    for (const b of bags) for (const t of b.keys()) df.set(t, (df.get(t) ?? 0) + 1);
    const n = docs.length;
    const idf = new Map<string, number>();
    for (const [t, f] of df) idf.set(t, Math.log((1 + n) / (1 + f)) + 1);
    const fallback = Math.log(1 + n) + 1;
    const q = weigh(bag(query, 1), idf, fallback);
    const scored: RankedDocument[] = [];
    docs.forEach((doc, i) => {
      const score = cosine(q, weigh(bags[i]!, idf, fallback));
      if (score >= MIN_SCORE) scored.push({ doc, score });
    });
    scored.sort((a, b) => b.score - a.score || a.doc.name.localeCompare(b.doc.name) || a.doc.id.localeCompare(b.doc.id));
    return scored.slice(0, limit);
  },
};
