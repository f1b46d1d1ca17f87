/**
 * The blinding of an export and its key file.
 *
 * Per sampled query the two columns' top results are shown as "X" and "Y". Which one is the candidate comes from
 * HMAC-SHA256(secret, exportId, the two column refs (labels, indices, config digests), query id), lowest bit: a 256-bit
 * secret drawn fresh for each export and kept only in the key file, never in the page. The column refs are in the MAC
 * input, so a key whose labels were swapped no longer gives the sides it records; and the key carries its own MAC over
 * every field (labels, sample, reviewers, sides), so any edit of it is refused, whatever a ratings file says.
 *
 * The page carries the export's id and the key digest: SHA-256 of the key's canonical JSON without the judge digests
 * `review judge` appends (a commitment to the secret, the columns and the sides: the digest of a file holding a 256-bit
 * secret tells nothing about the sides). Each ratings file carries both back, so import detects ratings of another export.
 *
 * What this cannot prove: someone who holds the key file holds the secret, and can write a consistent key, ratings
 * and result for anything (hence 0600, gitignored, and in CI the base branch's key or a keyed seal: docs/review.md).
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { UserError } from '../errors.ts';
import { checkFormatVersion } from '../util/format-version.ts';
import { mulberry32 } from '../metrics/significance.ts';
import type { Column } from '../results/read.ts';
import { canonicalJson, sha256Hex } from '../util/seal.ts';
import { REVIEW_FORMAT, type RatingEntry, type ReviewColumnRef, type ReviewKey, type Side } from './types.ts';

const hmac = (secret: string, text: string) => createHmac('sha256', Buffer.from(secret, 'hex')).update(text).digest();
const eqHex = (a: string, b: string) => a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b));

export function columnRef(c: Column): ReviewColumnRef {
  return { label: c.label, index: c.index, configDigest: c.configUnknown ? null : sha256Hex(canonicalJson(c.config ?? {})) };
}

/** The side the candidate is shown on for one query: keyed (not derivable without the secret) and bound to the two columns. */
export function candidateSide(secret: string, exportId: string, baseline: ReviewColumnRef, candidate: ReviewColumnRef, queryId: string): Side {
  const mac = hmac(secret, `rankgate-review-side\n${exportId}\n${canonicalJson({ baseline, candidate })}\n${queryId}`);
  return (mac[0]! & 1) === 1 ? 'X' : 'Y';
}

type Unsealed = Omit<ReviewKey, 'mac' | 'judged'>;

/** The key's own MAC: every field but the MAC and the appended judge digests. */
export function keyMac(key: Unsealed | ReviewKey): string {
  const { mac: _m, judged: _j, ...core } = key as ReviewKey;
  return hmac(key.secret, `rankgate-review-key\n${canonicalJson(core)}`).toString('hex');
}

/** The digest the page and every ratings file carry: SHA-256 of the key's canonical JSON without the judge digests. */
export function keyDigest(key: ReviewKey): string {
  const { judged: _j, ...core } = key;
  return sha256Hex(canonicalJson(core));
}

export function sealKeyFile(key: Unsealed): ReviewKey {
  return { ...key, mac: keyMac(key) };
}

/** The ratings a judge gave, in the form compared: [{item, x, y}] by item (notes, names and the MAC left out). */
function ratingSet(ratings: readonly RatingEntry[]): { item: number; x: number; y: number }[] {
  return ratings.map((r) => ({ item: r.item, x: r.x, y: r.y })).sort((a, b) => a.item - b.item);
}

/** The digest of a ratings set `review judge` produced, recorded in the key: the same ratings relabelled human are refused. */
export function judgeSetDigest(exportId: string, ratings: readonly RatingEntry[]): string {
  return sha256Hex(`rankgate-review-judge-set\n${exportId}\n${canonicalJson(ratingSet(ratings))}`);
}

/** A judge's ratings MAC: with the export's secret, so no one without the key file can mark ratings as a judge's or a judge's as anyone else's. */
export function judgeMac(secret: string, doc: { exportId: string; reviewer: string; ratings: readonly RatingEntry[] }): string {
  return hmac(secret, `rankgate-review-judge\n${canonicalJson({ exportId: doc.exportId, reviewer: doc.reviewer, ratings: ratingSet(doc.ratings) })}`).toString('hex');
}

export function judgeMacOk(secret: string, doc: { exportId: string; reviewer: string; ratings: readonly RatingEntry[]; mac?: unknown }): boolean {
  return typeof doc.mac === 'string' && eqHex(doc.mac, judgeMac(secret, doc));
}

/** A seeded sample of n ids (Fisher-Yates on mulberry32 over the ids sorted), in the sampled order. */
export function sampleIds(ids: readonly string[], n: number, seed: number): string[] {
  const a = [...ids].sort();
  const rnd = mulberry32(seed);
  for (let i = a.length - 1; i > 0; i--) {
    const j = Math.floor(rnd() * (i + 1));
    [a[i], a[j]] = [a[j]!, a[i]!];
  }
  return a.slice(0, Math.min(n, a.length));
}

// ------------------------------------------------------------------------------------------------ reading the key

export const isObj = (x: unknown): x is Record<string, unknown> => !!x && typeof x === 'object' && !Array.isArray(x);
const HEX = (n: number) => new RegExp(`^[0-9a-f]{${n}}$`);

export function parseJson(text: string, path: string, what: string): unknown {
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new UserError(`${path}: not JSON (${(e as Error).message.split('\n')[0]}); expected the ${what}`);
  }
}

/** A format-1 file (rankgate before the review moved to src/review): one line saying so. */
export function checkVersion(path: string, v: unknown, what: string): void {
  if (v === 1) throw new UserError(`${path}: field 'version': 1 is the format of an older rankgate (the page showed query ids and unequal texts); export the review again with this rankgate (${what})`);
  // a newer version names the upgrade, anything else the field (docs/compatibility.md)
  checkFormatVersion(path, v, { what: `blind review (${what})`, field: 'version', current: REVIEW_FORMAT });
}

export function checkColumnRef(path: string, field: string, x: unknown): ReviewColumnRef {
  if (!isObj(x) || typeof x.label !== 'string' || typeof x.index !== 'number' || !(x.configDigest === null || (typeof x.configDigest === 'string' && HEX(64).test(x.configDigest))))
    throw new UserError(`${path}: field '${field}': expected {label, index, configDigest}, got ${JSON.stringify(x)?.slice(0, 80)}`);
  return { label: x.label, index: x.index, configDigest: x.configDigest as string | null };
}

/**
 * The key file's text, checked: its shape, its MAC (any edited field is refused), and every item's side against the
 * HMAC of its secret and columns. Returns the key and its digest (what the page and the ratings carry).
 */
export function parseReviewKey(text: string, path: string): { key: ReviewKey; digest: string } {
  const k = parseJson(text, path, 'review key file written by `rankgate review export`');
  if (!isObj(k) || k.kind !== 'rankgate-review-key') throw new UserError(`${path}: field 'kind': expected "rankgate-review-key" (the key file \`rankgate review export\` wrote beside the page)`);
  checkVersion(path, k.version, 'the key file');
  for (const f of ['exportId', 'secret', 'mac'] as const) {
    const n = f === 'exportId' ? 32 : 64;
    if (typeof k[f] !== 'string' || !HEX(n).test(k[f] as string)) throw new UserError(`${path}: field '${f}': expected ${n} hex digits (the blinding key was edited)`);
  }
  const baseline = checkColumnRef(path, 'baseline', k.baseline);
  const candidate = checkColumnRef(path, 'candidate', k.candidate);
  if (!isObj(k.results) || typeof k.results.file !== 'string') throw new UserError(`${path}: field 'results': expected {file, evalId}`);
  if (!Array.isArray(k.assignment) || !k.assignment.length) throw new UserError(`${path}: field 'assignment': expected the page's items (the blinding key was edited)`);
  if (!Array.isArray(k.skippedIdentical) || !k.skippedIdentical.every((x) => typeof x === 'string')) throw new UserError(`${path}: field 'skippedIdentical': expected a list of query ids`);
  if (!(k.reviewers === null || (Array.isArray(k.reviewers) && k.reviewers.every((x) => typeof x === 'string')))) throw new UserError(`${path}: field 'reviewers': expected null or a list of names`);
  if (k.judged !== undefined && !(Array.isArray(k.judged) && k.judged.every((x) => typeof x === 'string' && HEX(64).test(x)))) throw new UserError(`${path}: field 'judged': expected a list of digests`);
  const seen = new Set<string>();
  k.assignment.forEach((a: unknown, i: number) => {
    if (!isObj(a) || typeof a.id !== 'string' || a.item !== i + 1 || (a.candidate !== 'X' && a.candidate !== 'Y') || typeof a.identical !== 'boolean')
      throw new UserError(`${path}: field 'assignment[${i}]': expected {item: ${i + 1}, id, candidate: "X"|"Y", identical}`);
    if (seen.has(a.id)) throw new UserError(`${path}: query '${a.id}': field 'assignment': listed twice (the blinding key was edited)`);
    seen.add(a.id);
  });
  if (!eqHex(k.mac as string, keyMac(k as unknown as ReviewKey)))
    throw new UserError(`${path}: field 'mac': does not match the key's content (the blinding key was edited after the export: labels, columns, sample or sides)`);
  (k.assignment as ReviewKey['assignment']).forEach((a, i) => {
    if (candidateSide(k.secret as string, k.exportId as string, baseline, candidate, a.id) !== a.candidate)
      throw new UserError(`${path}: query '${a.id}': field 'assignment[${i}].candidate': does not match the key's secret and columns (the blinding key was edited)`);
  });
  const key = k as unknown as ReviewKey;
  return { key, digest: keyDigest(key) };
}
