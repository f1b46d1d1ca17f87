/**
 * Token-budget, sentence-aware chunker.
 *
 * Rules (documented in the README, "Corpus, chunking, routing and the HTTP server"):
 * - Budget: `chunkSize` o200k tokens (gpt-tokenizer), counted on the exact chunk text. 200/300/500 are the
 *   standard sizes; any integer >= 16 is accepted.
 * - Each section is split into paragraphs (blank lines), each paragraph into sentences with
 *   `Intl.Segmenter(language, {granularity: 'sentence'})` (per paragraph: the segmenter is super-linear on
 *   big strings). Whitespace inside a paragraph is collapsed; sentences are joined by one space,
 *   paragraphs by a blank line.
 * - Sentences are packed greedily into a chunk while the chunk stays within the budget. A sentence is split
 *   only when it alone exceeds the budget: at word boundaries, or between characters when one "word"
 *   exceeds it (scripts without spaces, base64 blobs).
 * - Overlap: a new chunk starts with the trailing whole sentences of the previous chunk of the same
 *   section whose tokens sum to at most `overlap` (fewer when the next sentence would not fit otherwise).
 *   Pieces of a split sentence count as sentences.
 * - Chunks never cross a section (chapter / heading) boundary; overlap never crosses one either.
 * - Ids: `<documentId>#c<chunkSize>-<index>`, index 0-based over the whole document, so the same text and
 *   parameters always give the same ids. Prechunked documents (NQ) pass through with their own ids.
 */
import { countTokens } from '../util/tokens.ts';
import { UserError } from '../errors.ts';
import type { Chunk, ChunkOptions, CorpusDocument, DocumentSection } from './types.ts';

export const STANDARD_CHUNK_SIZES = [200, 300, 500] as const;
export const MIN_CHUNK_SIZE = 16;
/** Paragraphs longer than this are pre-cut (at sentence punctuation, else whitespace) before segmentation. */
const MAX_SEGMENT_CHARS = 8000;
/** Within this many tokens of the budget, fit tests tokenise the exact candidate text instead of summing. */
const NEAR = 24;

const segmenters = new Map<string, Intl.Segmenter>();
function sentenceSegmenter(language: string): Intl.Segmenter {
  let s = segmenters.get(language);
  if (!s) {
    try {
      s = new Intl.Segmenter(language || 'en', { granularity: 'sentence' });
    } catch {
      s = new Intl.Segmenter('en', { granularity: 'sentence' });
    }
    segmenters.set(language, s);
  }
  return s;
}

export function splitParagraphs(text: string): string[] {
  return text
    .replace(/\r\n?/g, '\n')
    .split(/\n[ \t]*\n+/)
    .map((p) => p.replace(/\s+/g, ' ').trim())
    .filter((p) => p.length > 0);
}

/** Cut a very long paragraph into blocks of at most MAX_SEGMENT_CHARS, preferring sentence ends. */
function preCut(paragraph: string): string[] {
  if (paragraph.length <= MAX_SEGMENT_CHARS) return [paragraph];
  const out: string[] = [];
  let rest = paragraph;
  while (rest.length > MAX_SEGMENT_CHARS) {
    const window = rest.slice(0, MAX_SEGMENT_CHARS);
    let cut = -1;
    const re = /[.!?।॥。！？]["'’”)\]]*\s/g;
    for (let m = re.exec(window); m; m = re.exec(window)) cut = m.index + m[0].length;
    if (cut < MAX_SEGMENT_CHARS / 4) cut = window.lastIndexOf(' ') + 1;
    if (cut <= 0) cut = MAX_SEGMENT_CHARS;
    // never cut between a high and a low surrogate
    const code = rest.charCodeAt(cut - 1);
    if (code >= 0xd800 && code <= 0xdbff) cut -= 1;
    out.push(rest.slice(0, cut).trim());
    rest = rest.slice(cut);
  }
  if (rest.trim()) out.push(rest.trim());
  return out.filter((b) => b.length > 0);
}

/** Sentences of one paragraph, language-aware. */
export function splitSentences(paragraph: string, language: string): string[] {
  const seg = sentenceSegmenter(language);
  const out: string[] = [];
  for (const block of preCut(paragraph)) {
    for (const s of seg.segment(block)) {
      const t = s.segment.trim();
      if (t) out.push(t);
    }
  }
  return out;
}

/** Longest prefix (in code points) of `chars` whose token count is <= budget; at least one code point. */
function longestFittingPrefix(chars: string[], budget: number): number {
  let lo = 1;
  let hi = chars.length;
  if (countTokens(chars.slice(0, hi).join('')) <= budget) return hi;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (countTokens(chars.slice(0, mid).join('')) <= budget) lo = mid;
    else hi = mid - 1;
  }
  return Math.max(1, lo);
}

/** Split one over-long sentence into pieces of at most `budget` tokens, at word boundaries where possible. */
export function splitLongSentence(sentence: string, budget: number): string[] {
  const words = sentence.split(/\s+/).filter(Boolean);
  const pieces: string[] = [];
  let current = '';
  let estimate = 0; // tokens of `current`, exact when near the budget
  for (const word of words) {
    const candidate = current ? `${current} ${word}` : word;
    const wordTokens = countTokens(` ${word}`);
    const est = estimate + wordTokens;
    if (est + NEAR <= budget) {
      current = candidate;
      estimate = est;
      continue;
    }
    const exactTokens = countTokens(candidate);
    if (exactTokens <= budget) {
      current = candidate;
      estimate = exactTokens;
      continue;
    }
    if (current) pieces.push(current);
    current = '';
    estimate = 0;
    if (countTokens(word) <= budget) {
      current = word;
      estimate = countTokens(word);
      continue;
    }
    // one "word" over budget: cut between code points
    let chars = Array.from(word);
    while (chars.length) {
      const n = longestFittingPrefix(chars, budget);
      const piece = chars.slice(0, n).join('');
      chars = chars.slice(n);
      if (chars.length) pieces.push(piece);
      else {
        current = piece;
        estimate = countTokens(piece);
      }
    }
  }
  if (current) pieces.push(current);
  return pieces;
}

interface Unit {
  text: string;
  tokens: number;
  /** First unit of a paragraph: joined to the previous unit with a blank line. */
  paragraphStart: boolean;
}

function sectionUnits(section: DocumentSection, language: string, budget: number): Unit[] {
  const units: Unit[] = [];
  for (const paragraph of splitParagraphs(section.text)) {
    let first = true;
    for (const sentence of splitSentences(paragraph, language)) {
      const tokens = countTokens(sentence);
      const pieces = tokens <= budget ? [sentence] : splitLongSentence(sentence, budget);
      for (const p of pieces) {
        units.push({ text: p, tokens: p === sentence ? tokens : countTokens(p), paragraphStart: first });
        first = false;
      }
    }
  }
  return units;
}

function joinUnits(units: Unit[]): string {
  let s = '';
  units.forEach((u, i) => {
    if (i === 0) s = u.text;
    else s += (u.paragraphStart ? '\n\n' : ' ') + u.text;
  });
  return s;
}

/**
 * Pack one section's units into chunk texts. With `exact`, every fit test tokenises the candidate text;
 * otherwise the sum of sentence tokens plus one per join is used while far from the budget (a join
 * changes the count by a token or so) and the exact count within NEAR tokens of it. The caller verifies
 * the result exactly and re-packs with `exact` if any chunk came out over budget.
 */
function packSection(units: Unit[], budget: number, overlap: number, exact: boolean): string[] {
  const out: string[] = [];
  let current: Unit[] = [];
  let fresh = 0; // units in `current` that are not overlap carried from the previous chunk
  let currentTokens = 0;

  const fits = (cand: Unit[], estimate: number): { ok: boolean; tokens: number } => {
    if (!exact && estimate + NEAR <= budget) return { ok: true, tokens: estimate };
    const t = countTokens(joinUnits(cand));
    return { ok: t <= budget, tokens: t };
  };
  const flush = () => {
    if (fresh > 0) out.push(joinUnits(current));
  };

  for (const unit of units) {
    if (current.length === 0) {
      current = [unit];
      currentTokens = unit.tokens;
      fresh = 1;
      continue;
    }
    const candidate = [...current, unit];
    const f = fits(candidate, currentTokens + unit.tokens + 1);
    if (f.ok) {
      current = candidate;
      currentTokens = f.tokens;
      fresh += 1;
      continue;
    }
    flush();
    // carry trailing whole sentences of the closed chunk, up to `overlap` tokens, leaving room for `unit`
    let carried: Unit[] = [];
    if (overlap > 0) {
      let sum = 0;
      for (let i = current.length - 1; i >= 0; i--) {
        const u = current[i]!;
        if (sum + u.tokens > overlap) break;
        carried.unshift(u);
        sum += u.tokens;
      }
      if (carried.length) carried[0] = { ...carried[0]!, paragraphStart: false };
      while (carried.length && countTokens(joinUnits([...carried, unit])) > budget) {
        carried = carried.slice(1);
        if (carried.length) carried[0] = { ...carried[0]!, paragraphStart: false };
      }
    }
    current = [...carried, unit];
    currentTokens = carried.length ? countTokens(joinUnits(current)) : unit.tokens;
    fresh = 1;
  }
  flush();
  return out;
}

function packSectionChecked(units: Unit[], budget: number, overlap: number): { text: string; tokens: number }[] {
  const fast = packSection(units, budget, overlap, false).map((text) => ({ text, tokens: countTokens(text) }));
  if (fast.every((c) => c.tokens <= budget)) return fast;
  return packSection(units, budget, overlap, true).map((text) => ({ text, tokens: countTokens(text) }));
}

export function validateChunkOptions(opts: ChunkOptions): { chunkSize: number; overlap: number } {
  const { chunkSize } = opts;
  const overlap = opts.overlap ?? 0;
  if (!Number.isInteger(chunkSize) || chunkSize < MIN_CHUNK_SIZE) {
    throw new UserError(`chunk size: expected an integer >= ${MIN_CHUNK_SIZE} tokens, got ${String(chunkSize)}`);
  }
  if (!Number.isInteger(overlap) || overlap < 0 || overlap >= chunkSize) {
    throw new UserError(
      `chunk overlap: expected an integer from 0 to ${chunkSize - 1} tokens (below the chunk size), got ${String(overlap)}`,
    );
  }
  return { chunkSize, overlap };
}

export function chunkId(documentId: string, chunkSize: number, index: number): string {
  return `${documentId}#c${chunkSize}-${index}`;
}

/** Chunk one document. Pure and deterministic: same document and options -> same chunks and ids. */
export function chunkDocument(doc: CorpusDocument, opts: ChunkOptions): Chunk[] {
  const { chunkSize, overlap } = validateChunkOptions(opts);
  const base = {
    ...(doc.slug !== undefined ? { bookSlug: doc.slug } : {}),
    ...(doc.path !== undefined ? { path: doc.path } : {}),
  };
  if (doc.prechunked) {
    return doc.prechunked.map((p, i) => ({
      id: p.id,
      documentId: doc.id,
      chunkIndex: i,
      content: p.content,
      language: doc.language,
      tokenCount: countTokens(p.content),
      metadata: { ...(p.metadata ?? {}), ...base },
    }));
  }
  const chunks: Chunk[] = [];
  for (const section of doc.sections) {
    const units = sectionUnits(section, doc.language, chunkSize);
    for (const packed of packSectionChecked(units, chunkSize, overlap)) {
      const index = chunks.length;
      chunks.push({
        id: chunkId(doc.id, chunkSize, index),
        documentId: doc.id,
        chunkIndex: index,
        content: packed.text,
        language: doc.language,
        tokenCount: packed.tokens,
        metadata: {
          ...base,
          ...(section.chapterNumber !== undefined ? { chapterNumber: section.chapterNumber } : {}),
          ...(section.heading !== undefined ? { heading: section.heading } : {}),
        },
      });
    }
  }
  return chunks;
}
