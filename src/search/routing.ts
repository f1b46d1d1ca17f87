/**
 * Query routing, configured in YAML, never in code:
 * - practice_bridge: requests for technique instructions, by regular expressions and by cosine similarity
 *   of the query vector to configurable exemplar queries (exemplar vectors computed once per router);
 * - no_results: best normalised relevance of the hits under a threshold (off-topic queries);
 * - safety: crisis-adjacent queries, by a per-language lexicon (phrases + optional patterns).
 *
 * Routing rules are specific to a corpus: there is no default. A SearchService given no routing config does
 * no routing (every query routes 'search', no safety flag). The demo's rules live beside the demo corpus in
 * datasets/routing.yaml (DEMO_ROUTING_PATH), referenced by promptfooconfig.yaml (`routingConfig:`); the exact
 * definitions are in that file's comments and docs/search.md.
 *
 * A routing file is refused, before any query runs, with ONE line naming the file, the line and the key:
 * unknown keys get a did-you-mean and the list of valid ones; YAML goes through src/util/yaml.ts (bounded
 * alias expansion).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { UserError } from '../errors.ts';
import { loadYaml } from '../util/yaml.ts';
import { packageRoot } from '../util/package-root.ts';
import { unknownKeyMessage } from '../util/suggest.ts';
import type { Embedder } from '../embeddings/types.ts';
import type { RoutingDecision, SearchHit } from './types.ts';

/** The demo corpus's routing rules (tuned for datasets/corpus; not a default for other data). */
export const DEMO_ROUTING_PATH = join(packageRoot(import.meta.url), 'datasets', 'routing.yaml');

const unit = z.number().min(0).max(1);
const regexString = z.string().min(1).superRefine((s, ctx) => {
  try {
    new RegExp(s, 'iu');
  } catch (e) {
    ctx.addIssue({ code: 'custom', message: `not a valid regular expression: ${(e as Error).message}` });
  }
});
const stringList = z.array(z.string().min(1, 'expected a non-empty string'));

export const routingConfigSchema = z.strictObject({
  version: z.literal(1).default(1),
  practice_bridge: z
    .strictObject({
      enabled: z.boolean().default(true),
      patterns: z.array(regexString).default([]),
      exemplars: stringList.default([]),
      similarity_threshold: z.number().min(-1).max(1).default(0.8),
    })
    .prefault({}),
  no_results: z
    .strictObject({
      enabled: z.boolean().default(true),
      consider_top: z.number().int().min(1).default(5),
      cosine_floor: z.number().min(-1).max(1).default(0.2),
      cosine_ceiling: z.number().min(-1).max(1).default(0.6),
      weights: z.strictObject({ vector: z.number().min(0), keyword: z.number().min(0) }).default({ vector: 0.6, keyword: 0.4 }),
      thresholds: z
        .strictObject({ both: unit, vector_only: unit, keyword_only: unit })
        .default({ both: 0.3, vector_only: 0.3, keyword_only: 0.5 }),
      language_thresholds: z
        .record(z.string(), z.strictObject({ both: unit.optional(), vector_only: unit.optional(), keyword_only: unit.optional() }))
        .default({}),
      vector_languages_by_embedder: z.record(z.string(), z.array(z.string().min(1))).default({}),
      script_languages: z
        .record(z.string(), z.string().min(1))
        .default({})
        .superRefine((m, ctx) => {
          for (const script of Object.keys(m)) {
            try {
              new RegExp(`\\p{Script=${script}}`, 'u');
            } catch {
              ctx.addIssue({ code: 'custom', path: [script], message: `unknown Unicode script "${script}" (e.g. Devanagari, Latin, Arabic)` });
            }
          }
        }),
      min_term_length: z.number().int().min(1).default(3),
      stem_prefix: z.number().int().min(2).default(5),
      stopwords: z.record(z.string(), stringList).default({}),
    })
    .refine((v) => v.cosine_ceiling > v.cosine_floor, { message: 'cosine_ceiling must be greater than cosine_floor', path: ['cosine_ceiling'] })
    .refine((v) => v.weights.vector + v.weights.keyword > 0, { message: 'at least one weight must be positive', path: ['weights'] })
    .prefault({}),
  safety: z
    .strictObject({
      enabled: z.boolean().default(true),
      check_all_languages: z.boolean().default(true),
      suppress_no_results: z.boolean().default(true),
      lexicon: z.record(z.string(), stringList).default({}),
      patterns: z.record(z.string(), z.array(regexString)).default({}),
    })
    .prefault({}),
});

export type RoutingConfig = z.infer<typeof routingConfigSchema>;

/** The keys an object of `schema` accepts at `path` (through defaults, prefaults, optionals and records). */
function keysAt(schema: z.ZodType, path: readonly PropertyKey[]): string[] {
  let cur: unknown = schema;
  const unwrap = () => {
    for (let i = 0; i < 10; i++) {
      const def = (cur as { _zod?: { def?: { innerType?: unknown; in?: unknown } } })._zod?.def;
      if (def?.innerType) cur = def.innerType;
      else if (def?.in) cur = def.in;
      else break;
    }
  };
  for (const p of path) {
    unwrap();
    const def = (cur as { _zod?: { def?: { type?: string; shape?: Record<string, unknown>; valueType?: unknown } } })._zod?.def;
    if (def?.type === 'object' && def.shape && typeof p === 'string' && p in def.shape) cur = def.shape[p];
    else if (def?.type === 'record') cur = def.valueType;
    else return [];
  }
  unwrap();
  const def = (cur as { _zod?: { def?: { type?: string; shape?: Record<string, unknown> } } })._zod?.def;
  return def?.type === 'object' && def.shape ? Object.keys(def.shape) : [];
}

/** 1-based line of `path` in a block-style YAML text (each key searched after its parent's line), or undefined. */
function lineOf(text: string | undefined, path: readonly PropertyKey[]): number | undefined {
  if (!text || path.length === 0) return undefined;
  const lines = text.split('\n');
  let from = 0;
  let found: number | undefined;
  for (const p of path) {
    const esc = String(p).replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    const re = new RegExp(`^\\s*(-\\s+)?(${esc}|"${esc}"|'${esc}')\\s*:`);
    let i = from;
    while (i < lines.length && !re.test(lines[i]!)) i++;
    if (i >= lines.length) return found;
    found = i + 1;
    from = i + 1;
  }
  return found;
}

/**
 * Validate an already-parsed config object; `source` names it in errors, `text` (the YAML) gives line numbers.
 * The first problem is ONE line: `FILE:LINE: KEY: what is wrong, expected ...` (unknown keys with a
 * did-you-mean and the valid keys).
 */
export function parseRoutingConfig(value: unknown, source = 'routing config', text?: string): RoutingConfig {
  const r = routingConfigSchema.safeParse(value ?? {});
  if (r.success) return r.data;
  const issue = r.error.issues[0]!;
  const path = issue.path;
  if (issue.code === 'unrecognized_keys') {
    const key = issue.keys[0]!;
    const line = lineOf(text, [...path, key]);
    throw new UserError(unknownKeyMessage(`${source}${line ? `:${line}` : ''}`, path.map(String).join('.'), key, keysAt(routingConfigSchema, path)));
  }
  const line = lineOf(text, path);
  const where = path.map(String).join('.') || '(root)';
  const more = r.error.issues.length > 1 ? ` (and ${r.error.issues.length - 1} more problem${r.error.issues.length > 2 ? 's' : ''})` : '';
  throw new UserError(`${source}${line ? `:${line}` : ''}: ${where}: ${issue.message.split('\n')[0]}${more}`);
}

/** Load and validate a routing YAML file (no argument: the demo's rules, datasets/routing.yaml). */
export function loadRoutingConfig(path: string = DEMO_ROUTING_PATH): RoutingConfig {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    throw new UserError(`${path}: routing config not found, expected a routing YAML file (routingConfig: / --routing)`);
  }
  return parseRoutingConfig(loadYaml(text, path), path, text);
}

// ------------------------------------------------------------------------------------ text helpers

/** NFKC, curly quotes to ASCII, whitespace collapsed, lower-cased. */
export function normalizeQuery(s: string): string {
  return s
    .normalize('NFKC')
    .replace(/[\u2018\u2019\u02bc]/g, "'")
    .replace(/[\u201c\u201d]/g, '"')
    .replace(/\s+/g, ' ')
    .trim()
    .toLowerCase();
}

/** Fold Latin accents (combining marks U+0300-U+036F only; Devanagari vowel signs are kept). */
export function foldLatin(s: string): string {
  return s.normalize('NFD').replace(/[\u0300-\u036f]/g, '').normalize('NFC');
}

function escapeRegex(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** Whole-word phrase matcher: no letter, mark or digit directly before or after. */
function phraseRegex(phrase: string): RegExp {
  const body = foldLatin(normalizeQuery(phrase)).split(' ').map(escapeRegex).join('\\s+');
  return new RegExp(`(?<![\\p{L}\\p{M}\\p{N}])${body}(?![\\p{L}\\p{M}\\p{N}])`, 'u');
}

const WORD = /[\p{L}\p{M}\p{N}]+/gu;
function words(s: string): string[] {
  return foldLatin(normalizeQuery(s)).match(WORD) ?? [];
}

export function cosine(a: readonly number[], b: readonly number[]): number {
  let dot = 0;
  let na = 0;
  let nb = 0;
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    dot += a[i]! * b[i]!;
    na += a[i]! * a[i]!;
    nb += b[i]! * b[i]!;
  }
  return na && nb ? dot / Math.sqrt(na * nb) : 0;
}

// ----------------------------------------------------------------------------------------- router

export interface RelevanceBreakdown {
  /** Normalised relevance (0..1) of the best of the first consider_top hits. */
  top: number;
  vector?: number;
  keyword?: number;
  signals: 'both' | 'vector_only' | 'keyword_only' | 'none';
  threshold: number;
}

export interface Router {
  readonly config: RoutingConfig;
  route(query: string, hits: readonly SearchHit[], queryVector?: readonly number[], language?: string): Promise<RoutingDecision>;
  /** Safety check alone (no hits needed). */
  safety(query: string, language?: string): { flagged: boolean; reasons: string[] };
  /** Pattern + exemplar check alone. */
  practiceBridge(query: string, queryVector?: readonly number[]): Promise<{ matched: boolean; reasons: string[] }>;
  /** The normalised relevance the no_results rule compares with its threshold. */
  relevance(query: string, hits: readonly SearchHit[], language?: string): RelevanceBreakdown;
}

export function createRouter(config: RoutingConfig, embedder?: Embedder): Router {
  const pb = config.practice_bridge;
  const nr = config.no_results;
  const sf = config.safety;
  const pbPatterns = pb.patterns.map((p) => ({ source: p, re: new RegExp(p, 'iu') }));

  const lexicon = Object.entries(sf.lexicon).flatMap(([lang, phrases]) =>
    phrases.map((p) => ({ lang, phrase: p, re: phraseRegex(p) })),
  );
  const safetyPatterns = Object.entries(sf.patterns).flatMap(([lang, ps]) =>
    ps.map((p) => ({ lang, phrase: `/${p}/`, re: new RegExp(p, 'iu') })),
  );
  const stop = new Map<string, Set<string>>();
  for (const [lang, list] of Object.entries(nr.stopwords)) stop.set(lang, new Set(list.map((w) => foldLatin(normalizeQuery(w)))));
  const allStop = new Set([...stop.values()].flatMap((s) => [...s]));
  const scriptLangs = Object.entries(nr.script_languages).map(([script, lang]) => ({ re: new RegExp(`\\p{Script=${script}}`, 'u'), lang }));
  const vectorLangs = embedder ? nr.vector_languages_by_embedder[embedder.id] : undefined;
  /** The caller's language, else the first configured script found in the query. */
  const queryLanguage = (query: string, language?: string) => language ?? scriptLangs.find((s) => s.re.test(query))?.lang;

  let exemplarVectors: Promise<number[][]> | undefined;
  const getExemplars = () => {
    if (!embedder || pb.exemplars.length === 0) return Promise.resolve([] as number[][]);
    exemplarVectors ??= Promise.all(pb.exemplars.map((e) => embedder.embedQuery(e))).catch((e: unknown) => {
      exemplarVectors = undefined; // retry next time instead of caching a failure
      throw e;
    });
    return exemplarVectors;
  };

  function safety(query: string, language?: string) {
    if (!sf.enabled) return { flagged: false, reasons: [] as string[] };
    const q = foldLatin(normalizeQuery(query));
    const reasons: string[] = [];
    for (const entry of [...lexicon, ...safetyPatterns]) {
      if (!sf.check_all_languages && language && entry.lang !== language) continue;
      if (entry.re.test(q)) reasons.push(`safety: crisis lexicon (${entry.lang}) "${entry.phrase}" matched`);
    }
    return { flagged: reasons.length > 0, reasons };
  }

  async function practiceBridge(query: string, queryVector?: readonly number[]) {
    if (!pb.enabled) return { matched: false, reasons: [] as string[] };
    const q = normalizeQuery(query);
    for (const p of pbPatterns) {
      if (p.re.test(q)) return { matched: true, reasons: [`practice_bridge: pattern /${p.source}/ matched`] };
    }
    if (embedder && pb.exemplars.length) {
      const vec = queryVector ?? (await embedder.embedQuery(query));
      const ex = await getExemplars();
      let best = -Infinity;
      let bestIdx = -1;
      ex.forEach((v, i) => {
        const c = cosine(vec, v);
        if (c > best) {
          best = c;
          bestIdx = i;
        }
      });
      if (bestIdx >= 0 && best >= pb.similarity_threshold) {
        return {
          matched: true,
          reasons: [`practice_bridge: cosine ${best.toFixed(3)} to exemplar "${pb.exemplars[bestIdx]}" >= ${pb.similarity_threshold}`],
        };
      }
    }
    return { matched: false, reasons: [] };
  }

  function queryTerms(query: string, language?: string): string[] {
    const sw = (language && stop.get(language)) || allStop;
    const terms = words(query).filter((w) => [...w].length >= nr.min_term_length && !sw.has(w) && !allStop.has(w));
    return [...new Set(terms)];
  }

  function termMatches(term: string, contentWords: Set<string>, prefixes: Set<string>): boolean {
    if (contentWords.has(term)) return true;
    const chars = [...term];
    return chars.length >= nr.stem_prefix && prefixes.has(chars.slice(0, nr.stem_prefix).join(''));
  }

  function relevance(query: string, hits: readonly SearchHit[], lang?: string): RelevanceBreakdown {
    const language = queryLanguage(query, lang);
    const useVector = !vectorLangs || (language !== undefined ? vectorLangs.includes(language) : true);
    const top = hits.slice(0, nr.consider_top);
    const terms = queryTerms(query, language);
    let best = 0;
    let bestVector: number | undefined;
    let bestKeyword: number | undefined;
    let hasVector = false;
    let hasKeyword = false;
    for (const h of top) {
      const signals: { v: number; w: number }[] = [];
      if (useVector && h.channels.vector && Number.isFinite(h.channels.vector.score)) {
        hasVector = true;
        const v = Math.min(1, Math.max(0, (h.channels.vector.score - nr.cosine_floor) / (nr.cosine_ceiling - nr.cosine_floor)));
        bestVector = Math.max(bestVector ?? 0, v);
        signals.push({ v, w: nr.weights.vector });
      }
      // Keyword signal: present when the hit came from the keyword channel, or when no channel is
      // recorded at all (a plain result list).
      if (h.channels.keyword || !h.channels.vector || !useVector) {
        hasKeyword = true;
        let k = 0;
        if (terms.length) {
          const cw = new Set(words(h.content));
          const prefixes = new Set([...cw].map((w) => [...w].slice(0, nr.stem_prefix).join('')).filter((p) => [...p].length >= nr.stem_prefix));
          k = terms.filter((t) => termMatches(t, cw, prefixes)).length / terms.length;
        }
        bestKeyword = Math.max(bestKeyword ?? 0, k);
        signals.push({ v: k, w: nr.weights.keyword });
      }
      const wsum = signals.reduce((s, x) => s + x.w, 0);
      const rel = wsum > 0 ? signals.reduce((s, x) => s + x.v * x.w, 0) / wsum : 0;
      if (rel > best) best = rel;
    }
    const kind = hasVector && hasKeyword ? 'both' : hasVector ? 'vector_only' : hasKeyword ? 'keyword_only' : 'none';
    const thresholds = { ...nr.thresholds, ...(language !== undefined ? nr.language_thresholds[language] : undefined) };
    const threshold = kind === 'none' ? thresholds.both : thresholds[kind];
    return {
      top: best,
      ...(bestVector !== undefined ? { vector: bestVector } : {}),
      ...(bestKeyword !== undefined ? { keyword: bestKeyword } : {}),
      signals: kind,
      threshold,
    };
  }

  async function route(query: string, hits: readonly SearchHit[], queryVector?: readonly number[], language?: string): Promise<RoutingDecision> {
    const s = safety(query, language);
    const reasons = [...s.reasons];
    const p = await practiceBridge(query, queryVector);
    if (p.matched) return { route: 'practice_bridge', safety: s.flagged, reasons: [...reasons, ...p.reasons] };
    if (nr.enabled) {
      const r = relevance(query, hits, language);
      const fmt = (x?: number) => (x === undefined ? '-' : x.toFixed(3));
      const detail = `top relevance ${r.top.toFixed(3)} (vector ${fmt(r.vector)}, keyword ${fmt(r.keyword)}; ${r.signals})`;
      if (r.top < r.threshold) {
        if (s.flagged && sf.suppress_no_results) {
          reasons.push(`no_results suppressed for a safety query: ${detail} < ${r.threshold}`);
        } else {
          return { route: 'no_results', safety: s.flagged, reasons: [...reasons, `no_results: ${detail} < ${r.threshold}`], topRelevance: r.top };
        }
      }
      return { route: 'search', safety: s.flagged, reasons, topRelevance: r.top };
    }
    return { route: 'search', safety: s.flagged, reasons };
  }

  return { config, route, safety, practiceBridge, relevance };
}
