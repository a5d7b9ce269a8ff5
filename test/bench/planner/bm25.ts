/**
 * The lexical baseline the offline planner is measured against: Okapi BM25 over every text
 * file of a snapshot, each document being its path's tokens counted twice plus its content's
 * tokens. Pure: documents and task texts in, ranked paths out.
 *
 * score(q, d) = Σ_{t ∈ q} idf(t) · tf(t,d)·(k1 + 1) / (tf(t,d) + k1·(1 − b + b·|d|/avgdl))
 * idf(t)      = ln(1 + (N − df(t) + 0.5) / (df(t) + 0.5))          (never negative)
 *
 * where q is the task's distinct tokens, tf counts a token in the document (path ×2 +
 * content), |d| is the document's token count (path ×2 + content), N the number of documents
 * and df(t) how many contain t.
 */

export const BM25_K1 = 1.2;
export const BM25_B = 0.75;
/** How many times a path's tokens count, against once for the content's. */
export const PATH_WEIGHT = 2;
/** The files a method may name: recall is measured at this depth. */
export const TOP_FILES = 8;

/**
 * Lucene's English stop words (EnglishAnalyzer.ENGLISH_STOP_WORDS_SET), the usual small list.
 */
export const STOP_WORDS: ReadonlySet<string> = new Set([
  "a",
  "an",
  "and",
  "are",
  "as",
  "at",
  "be",
  "but",
  "by",
  "for",
  "if",
  "in",
  "into",
  "is",
  "it",
  "no",
  "not",
  "of",
  "on",
  "or",
  "such",
  "that",
  "the",
  "their",
  "then",
  "there",
  "these",
  "they",
  "this",
  "to",
  "was",
  "will",
  "with",
]);

/** Runs of capitals (an acronym), capitalised or lower-case words, and digit runs. */
const WORD_PART = /[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+/g;

/**
 * Splits text into lower-case tokens: on anything that is not an ASCII letter or digit
 * (whitespace, punctuation, `_`, `-`, `/`, `.`), then camelCase and acronym boundaries;
 * stop words and one-character tokens are dropped.
 *
 * @example
 * tokenize("getQueryString(HTTPServer)"); // ["get", "query", "string", "http", "server"]
 * tokenize("src/auth/user_store.ts"); // ["src", "auth", "user", "store", "ts"]
 */
export function tokenize(text: string): string[] {
  const tokens: string[] = [];
  for (const word of text.split(/[^A-Za-z0-9]+/)) {
    if (word === "") continue;
    for (const part of word.match(WORD_PART) ?? []) {
      const token = part.toLowerCase();
      if (token.length < 2 || STOP_WORDS.has(token)) continue;
      tokens.push(token);
    }
  }
  return tokens;
}

/** One file of the tree, as BM25 sees it. */
export interface Bm25Document {
  path: string;
  content: string;
}

export interface RankedFile {
  path: string;
  score: number;
}

/**
 * Ranks `documents` for each of `queries` and returns, per query, the best `limit` files with a
 * positive score, best first (ties: path order). The documents are tokenised once for all the
 * queries, counting only the tokens some query has, so a large tree needs little memory.
 *
 * @example
 * const [ranked] = rankBm25(
 *   [{ path: "src/auth.ts", content: "login session" }, { path: "README.md", content: "docs" }],
 *   ["fix login"],
 * );
 * // ranked → [{ path: "src/auth.ts", score: 0.633… }]
 */
export function rankBm25(
  documents: readonly Bm25Document[],
  queries: readonly string[],
  limit: number = TOP_FILES,
): RankedFile[][] {
  const queryTerms = queries.map((query) => [...new Set(tokenize(query))]);
  const wanted = new Set(queryTerms.flat());
  const lengths: number[] = [];
  const counts: Map<string, number>[] = [];
  for (const document of documents) {
    const tf = new Map<string, number>();
    let length = 0;
    const add = (tokens: string[], weight: number) => {
      length += tokens.length * weight;
      for (const token of tokens) {
        if (wanted.has(token)) tf.set(token, (tf.get(token) ?? 0) + weight);
      }
    };
    add(tokenize(document.path), PATH_WEIGHT);
    add(tokenize(document.content), 1);
    lengths.push(length);
    counts.push(tf);
  }
  const total = documents.length;
  const averageLength = total === 0 ? 0 : lengths.reduce((sum, n) => sum + n, 0) / total;
  const documentFrequency = new Map<string, number>();
  for (const tf of counts) {
    for (const token of tf.keys()) {
      documentFrequency.set(token, (documentFrequency.get(token) ?? 0) + 1);
    }
  }
  return queryTerms.map((terms) => {
    const ranked: RankedFile[] = [];
    documents.forEach((document, i) => {
      let score = 0;
      for (const term of terms) {
        const tf = counts[i]!.get(term) ?? 0;
        if (tf === 0) continue;
        const df = documentFrequency.get(term) ?? 0;
        const idf = Math.log(1 + (total - df + 0.5) / (df + 0.5));
        const norm = BM25_K1 * (1 - BM25_B + (BM25_B * lengths[i]!) / averageLength);
        score += (idf * tf * (BM25_K1 + 1)) / (tf + norm);
      }
      if (score > 0) ranked.push({ path: document.path, score });
    });
    ranked.sort((a, b) => b.score - a.score || (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
    return ranked.slice(0, limit);
  });
}
