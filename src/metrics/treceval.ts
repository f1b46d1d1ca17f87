/**
 * trec_eval 10's evaluation driver (trec_eval.c, measures.c, meas_*.c) over the byte-level
 * readers of trecfast.ts: which measures a `-m` list selects and with which parameters, the
 * per-query loop in qrels order, `-c`/`-M`/`-J`/`-N`/`-l`/`-D qid` semantics, averaging, and
 * output formatting byte for byte (`%-22s\t%s\t%6.4f`). Pure: output goes to a callback.
 */
import { calcNumNonrelJudgedRet, calcNumRel, calcNumRelRet, calcNumRet } from './counts.ts';
import { calcGmMap, calcMap, calcMapCut, calcRprec, calcRprecMult, calcSetMap, calcYaap } from './ap.ts';
import { calcMrrCut, calcRecipRank } from './rr.ts';
import { calcBpref, calcGmBpref, calcInfAP } from './bpref.ts';
import { calc11ptAvg, calcIprecAtRecall } from './interpolated.ts';
import {
  calcJudged,
  calcP,
  calcRecall,
  calcRelativeP,
  calcSetF,
  calcSetP,
  calcSetRecall,
  calcSetRelativeP,
  calcSuccess,
  calcUnj,
  calcUtility,
} from './precision.ts';
import { calcNdcg, calcNdcgCut, calcNdcgExpCut, calcNdcgRel, calcRndcg } from './ndcg.ts';
import { calcBinG, calcG } from './cg.ts';
import { calcRbp, calcRbpResid } from './rbp.ts';
import { relstring } from './relstring.ts';
import type { ParamPair } from './gains.ts';
import { makeResRels, RELVALUE_NONPOOL, type ResRels, type TrecContext } from './resrels.ts';
import { Qrels, RunQuery, RunReader, type QrelsQuery } from './trecfast.ts';

type Kind = 'runid' | 'num_q' | 'long' | 'double' | 'cut_long' | 'cut_double' | 'p_double' | 'p_pair' | 'relstring';
type Avg = 'mean' | 'sum' | 'gm' | 'num_q' | 'num_rel' | 'none';
type Params = number[] | ParamPair[];
type Calc = (rr: ResRels, ctx: TrecContext, p: Params, out: Float64Array, off: number) => void;

interface Def {
  name: string;
  kind: Kind;
  avg: Avg;
  /** printed per query with -q */
  perQuery: boolean;
  defaults?: number[];
  calc: Calc;
}

const CUTS = [5, 10, 15, 20, 30, 100, 200, 500, 1000];
const RECALL_PTS = [0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0];
const RPREC_MULT = [0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0];
const none: Calc = () => {};
const N = (p: Params) => p as number[];
const PP = (p: Params) => p as ParamPair[];

/** trec_eval 10's measures in its print order (measures.c te_trec_measures); prefs_* and *_avgjg left out. */
export const TREC_MEASURES: readonly Def[] = [
  { name: 'runid', kind: 'runid', avg: 'none', perQuery: false, calc: none },
  { name: 'num_q', kind: 'num_q', avg: 'num_q', perQuery: false, calc: none },
  { name: 'num_ret', kind: 'long', avg: 'sum', perQuery: true, calc: (r, _c, _p, o, f) => calcNumRet(r, o, f) },
  { name: 'num_rel', kind: 'long', avg: 'num_rel', perQuery: true, calc: (r, _c, _p, o, f) => calcNumRel(r, o, f) },
  { name: 'num_rel_ret', kind: 'long', avg: 'sum', perQuery: true, calc: (r, _c, _p, o, f) => calcNumRelRet(r, o, f) },
  { name: 'map', kind: 'double', avg: 'mean', perQuery: true, calc: (r, c, _p, o, f) => calcMap(r, c, o, f) },
  { name: 'gm_map', kind: 'double', avg: 'gm', perQuery: false, calc: (r, c, _p, o, f) => calcGmMap(r, c, o, f) },
  { name: 'Rprec', kind: 'double', avg: 'mean', perQuery: true, calc: (r, c, _p, o, f) => calcRprec(r, c, o, f) },
  { name: 'bpref', kind: 'double', avg: 'mean', perQuery: true, calc: (r, c, _p, o, f) => calcBpref(r, c, o, f) },
  { name: 'recip_rank', kind: 'double', avg: 'mean', perQuery: true, calc: (r, c, _p, o, f) => calcRecipRank(r, c, o, f) },
  { name: 'iprec_at_recall', kind: 'cut_double', avg: 'mean', perQuery: true, defaults: RECALL_PTS, calc: (r, c, p, o, f) => calcIprecAtRecall(r, c, N(p), o, f) },
  { name: 'P', kind: 'cut_long', avg: 'mean', perQuery: true, defaults: CUTS, calc: (r, c, p, o, f) => calcP(r, c, N(p), o, f) },
  { name: 'relstring', kind: 'relstring', avg: 'none', perQuery: true, defaults: [10], calc: none },
  { name: 'recall', kind: 'cut_long', avg: 'mean', perQuery: true, defaults: CUTS, calc: (r, c, p, o, f) => calcRecall(r, c, N(p), o, f) },
  { name: 'infAP', kind: 'double', avg: 'mean', perQuery: true, calc: (r, c, _p, o, f) => calcInfAP(r, c, o, f) },
  { name: 'gm_bpref', kind: 'double', avg: 'gm', perQuery: false, calc: (r, c, _p, o, f) => calcGmBpref(r, c, o, f) },
  { name: 'Rprec_mult', kind: 'cut_double', avg: 'mean', perQuery: true, defaults: RPREC_MULT, calc: (r, c, p, o, f) => calcRprecMult(r, c, N(p), o, f) },
  { name: 'utility', kind: 'p_double', avg: 'mean', perQuery: true, defaults: [1.0, -1.0, 0.0, 0.0], calc: (r, c, p, o, f) => calcUtility(r, c, N(p), o, f) },
  { name: '11pt_avg', kind: 'p_double', avg: 'mean', perQuery: true, defaults: RECALL_PTS, calc: (r, c, p, o, f) => calc11ptAvg(r, c, N(p), o, f) },
  { name: 'binG', kind: 'double', avg: 'mean', perQuery: true, calc: (r, c, _p, o, f) => calcBinG(r, c, o, f) },
  { name: 'G', kind: 'p_pair', avg: 'mean', perQuery: true, calc: (r, _c, p, o, f) => calcG(r, PP(p), o, f) },
  { name: 'dcg', kind: 'p_pair', avg: 'mean', perQuery: true, calc: (r, _c, p, o, f) => calcNdcg('dcg', r, PP(p), o, f) },
  { name: 'ideal_dcg', kind: 'p_pair', avg: 'mean', perQuery: true, calc: (r, _c, p, o, f) => calcNdcg('ideal_dcg', r, PP(p), o, f) },
  { name: 'ndcg', kind: 'p_pair', avg: 'mean', perQuery: true, calc: (r, _c, p, o, f) => calcNdcg('ndcg', r, PP(p), o, f) },
  { name: 'ndcg_rel', kind: 'p_pair', avg: 'mean', perQuery: true, calc: (r, _c, p, o, f) => calcNdcgRel(r, PP(p), o, f) },
  { name: 'Rndcg', kind: 'p_pair', avg: 'mean', perQuery: true, calc: (r, _c, p, o, f) => calcRndcg(r, PP(p), o, f) },
  { name: 'ndcg_cut', kind: 'cut_long', avg: 'mean', perQuery: true, defaults: CUTS, calc: (r, _c, p, o, f) => calcNdcgCut(r, N(p), o, f) },
  { name: 'map_cut', kind: 'cut_long', avg: 'mean', perQuery: true, defaults: CUTS, calc: (r, c, p, o, f) => calcMapCut(r, c, N(p), o, f) },
  { name: 'relative_P', kind: 'cut_long', avg: 'mean', perQuery: true, defaults: CUTS, calc: (r, c, p, o, f) => calcRelativeP(r, c, N(p), o, f) },
  { name: 'success', kind: 'cut_long', avg: 'mean', perQuery: true, defaults: [1, 5, 10], calc: (r, c, p, o, f) => calcSuccess(r, c, N(p), o, f) },
  { name: 'set_P', kind: 'double', avg: 'mean', perQuery: true, calc: (r, _c, _p, o, f) => calcSetP(r, o, f) },
  { name: 'set_relative_P', kind: 'double', avg: 'mean', perQuery: true, calc: (r, _c, _p, o, f) => calcSetRelativeP(r, o, f) },
  { name: 'set_recall', kind: 'double', avg: 'mean', perQuery: true, calc: (r, _c, _p, o, f) => calcSetRecall(r, o, f) },
  { name: 'set_map', kind: 'double', avg: 'mean', perQuery: true, calc: (r, _c, _p, o, f) => calcSetMap(r, o, f) },
  { name: 'set_F', kind: 'p_double', avg: 'mean', perQuery: true, defaults: [1.0], calc: (r, _c, p, o, f) => calcSetF(r, N(p), o, f) },
  { name: 'num_nonrel_judged_ret', kind: 'long', avg: 'sum', perQuery: true, calc: (r, _c, _p, o, f) => calcNumNonrelJudgedRet(r, o, f) },
  { name: 'yaap', kind: 'double', avg: 'mean', perQuery: true, calc: (r, c, _p, o, f) => calcYaap(r, c, o, f) },
  { name: 'rbp', kind: 'p_pair', avg: 'mean', perQuery: true, calc: (r, _c, p, o, f) => calcRbp(r, PP(p), o, f) },
  { name: 'rbp_resid', kind: 'p_pair', avg: 'mean', perQuery: true, calc: (r, _c, p, o, f) => calcRbpResid(r, PP(p), o, f) },
  { name: 'unj', kind: 'cut_long', avg: 'mean', perQuery: true, defaults: [5, 10, 20], calc: (r, _c, p, o, f) => calcUnj(r, N(p), o, f) },
  // rankgate's own (not in trec_eval, never in a nickname; printed after trec_eval's when asked for by name)
  { name: 'mrr_cut', kind: 'cut_long', avg: 'mean', perQuery: true, defaults: [10], calc: (r, c, p, o, f) => calcMrrCut(r, c, N(p), o, f) },
  { name: 'ndcg_exp_cut', kind: 'cut_long', avg: 'mean', perQuery: true, defaults: CUTS, calc: (r, _c, p, o, f) => calcNdcgExpCut(r, N(p), o, f) },
  { name: 'judged', kind: 'cut_long', avg: 'mean', perQuery: true, defaults: [5, 10, 20], calc: (r, _c, p, o, f) => calcJudged(r, N(p), o, f) },
];

/** measures.c nicknames (all_prefs / prefs / qrels_jg need -R formats we do not read). */
export const NICKNAMES: Readonly<Record<string, readonly string[]>> = {
  official: ['runid', 'num_q', 'num_ret', 'num_rel', 'num_rel_ret', 'map', 'gm_map', 'Rprec', 'bpref', 'recip_rank', 'iprec_at_recall', 'P'],
  set: ['runid', 'num_q', 'num_ret', 'num_rel', 'num_rel_ret', 'utility', 'set_P', 'set_recall', 'set_relative_P', 'set_map', 'set_F'],
  all_trec: [
    'runid', 'num_q', 'num_ret', 'num_rel', 'num_rel_ret', 'map', 'gm_map', 'Rprec', 'bpref', 'recip_rank', 'iprec_at_recall', 'P',
    'relstring', 'recall', 'unj', 'rbp', 'rbp_resid', 'infAP', 'gm_bpref', 'utility', '11pt_avg', 'ndcg', 'relative_P', 'Rprec_mult',
    'success', 'map_cut', 'ndcg_cut', 'ndcg_rel', 'Rndcg', 'binG', 'G', 'set_P', 'set_recall', 'set_relative_P', 'set_map', 'set_F',
    'num_nonrel_judged_ret',
  ],
};

/** A `-m` value was not understood (the CLI turns it into a one-line error). */
export class TrecMeasureError extends Error {}

/** C atol: optional blanks and sign, then digits; 0 when none. */
export function atol(s: string): number {
  const m = /^[ \t\n\v\f\r]*([+-]?\d+)/.exec(s);
  return m ? Number.parseInt(m[1]!, 10) : 0;
}
/**
 * C atof as glibc's strtod reads it: leading blanks, a sign, then the longest prefix that is a decimal number
 * (`1e-1`, `5.`, `.5`), a hexadecimal one (`0x1p-1`, `0x1.8P+3`, `0xA`), `inf`/`infinity` or `nan`/`nan(...)`
 * (all case-insensitive); 0 when no number starts the string (`0x` alone reads as 0). NaN for nan: callers
 * that cannot mirror trec_eval on NaN refuse it (see finiteParam).
 */
export function atof(s: string): number {
  const t = s.replace(/^[ \t\n\v\f\r]+/, '');
  const hex = /^([+-]?)0[xX]((?:[0-9a-fA-F]+\.?[0-9a-fA-F]*)|(?:\.[0-9a-fA-F]+))(?:[pP]([+-]?\d+))?/.exec(t);
  if (hex) return (hex[1] === '-' ? -1 : 1) * hexFloat(hex[2]!, hex[3] ?? '0');
  const m = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?/.exec(t);
  if (m) return Number(m[0]);
  const i = /^([+-]?)(inf(inity)?)/i.exec(t);
  if (i) return i[1] === '-' ? -Infinity : Infinity;
  if (/^[+-]?nan/i.test(t)) return Number.NaN;
  return 0;
}

/** The value of hex digits `digits` (one optional '.') times 2^exp, rounded to nearest-even like strtod. */
function hexFloat(digits: string, exp: string): number {
  const dot = digits.indexOf('.');
  const frac = dot < 0 ? 0 : digits.length - dot - 1;
  let m = BigInt('0x' + (digits.replace('.', '') || '0'));
  // the exponent is clamped: anything past +-1e5 is 0 or inf whatever the digits (at most a few thousand)
  let e = Math.max(-100000, Math.min(100000, Number.parseInt(exp, 10))) - 4 * frac;
  if (m === 0n) return 0;
  // keep 54 significant bits plus a sticky bit, rounding half to even at 53
  const bits = m.toString(2).length;
  if (bits > 53) {
    const drop = BigInt(bits - 53);
    const rest = m & ((1n << drop) - 1n);
    const half = 1n << (drop - 1n);
    m >>= drop;
    e += Number(drop);
    if (rest > half || (rest === half && (m & 1n) === 1n)) m += 1n;
  }
  // scale in steps so that 2^e alone never overflows or underflows before the product does
  let x = Number(m);
  while (e > 0) {
    const k = Math.min(e, 1000);
    x *= 2 ** k;
    e -= k;
  }
  while (e < 0) {
    const k = Math.min(-e, 1000);
    x /= 2 ** k;
    e += k;
  }
  return x;
}

/**
 * A measure parameter read with atof/atol that rankgate cannot mirror is refused in one line instead of misread:
 * NaN and infinities (trec_eval prints them in names such as `iprec_at_recall_nan` and computes with them in
 * ways that depend on C's NaN sign and comparison order), and integers beyond 2^53 (trec_eval's atol saturates
 * at LONG_MAX, which a JavaScript number cannot hold exactly).
 */
function finiteParam(spec: string, text: string, v: number, integer = false): number {
  if (!Number.isFinite(v)) {
    throw new TrecMeasureError(`-m ${spec}: parameter '${text.trim()}' reads as ${Number.isNaN(v) ? 'NaN' : v > 0 ? 'infinity' : '-infinity'}; expected a finite number (rankgate refuses it rather than guess trec_eval's NaN/infinity arithmetic)`);
  }
  if (integer && !Number.isSafeInteger(v)) {
    throw new TrecMeasureError(`-m ${spec}: parameter '${text.trim()}' is beyond 2^53; expected a smaller integer`);
  }
  return v;
}

/** One selected measure with its parameters and printed names. */
export interface Selected {
  def: Def;
  params: Params;
  names: string[];
  off: number;
}

export function formatFixed(x: number, d: number): string {
  if (Number.isNaN(x)) return '-nan';
  if (!Number.isFinite(x)) return x > 0 ? 'inf' : '-inf';
  let s = x.toFixed(d);
  // exact binary ties round half to even in glibc printf; toFixed rounds them up
  const scale = 2 ** (d + 1);
  const n2 = x * scale;
  if (Number.isInteger(n2) && Math.abs(n2) < 2 ** 40) {
    const p5 = 5 ** d;
    const num = Math.abs(n2) * p5; // = |x| * 10^d * 2
    if (Number.isSafeInteger(num) && num % 2 === 1) {
      const fl = (num - 1) / 2;
      const r = fl % 2 === 0 ? fl : fl + 1;
      s = (r / 10 ** d).toFixed(d);
      if (x < 0) s = '-' + s;
    }
  }
  if (Object.is(x, -0) || (x < 0 && !s.startsWith('-'))) s = '-' + s;
  return s;
}

const PAD4 = ['0000', '000', '00', '0', ''];

/** printf("%6.4f") */
export function fmt4(x: number): string {
  // fast path: 0 <= x < 2^31 and x*10^4 not within 1e-6 of a rounding tie (exact otherwise)
  if ((x > 0 && x < 2147483648) || (x === 0 && 1 / x > 0)) {
    const y = x * 10000;
    const fl = Math.floor(y);
    const fr = y - fl;
    if (fr < 0.499999 || fr > 0.500001) {
      const r = fr > 0.5 ? fl + 1 : fl;
      const ip = Math.floor(r / 10000);
      const f = String(r - ip * 10000);
      const s = `${ip}.${PAD4[f.length]}${f}`;
      return s.length >= 6 ? s : ' '.repeat(6 - s.length) + s;
    }
  }
  const s = formatFixed(x, 4);
  return s.length >= 6 ? s : ' '.repeat(6 - s.length) + s;
}

function parseCutLong(name: string, text: string): number[] {
  const ks = text
    .split(',')
    .map((t) => finiteParam(`${name}.${text}`, t, atol(t), true))
    .sort((a, b) => a - b);
  if (ks[0]! <= 0) throw new TrecMeasureError(`-m ${name}.${text}: cutoffs must be positive integers (trec_eval: Negative cutoff detected)`);
  for (let i = 1; i < ks.length; i++) if (ks[i] === ks[i - 1]) throw new TrecMeasureError(`-m ${name}.${text}: duplicate cutoff ${ks[i]}`);
  return ks;
}
function parseCutDouble(name: string, text: string): number[] {
  const ks = text
    .split(',')
    .map((t) => finiteParam(`${name}.${text}`, t, atof(t)))
    .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  for (let i = 1; i < ks.length; i++) if (ks[i] === ks[i - 1]) throw new TrecMeasureError(`-m ${name}.${text}: duplicate cutoff ${ks[i]}`);
  return ks;
}
function parsePairs(name: string, text: string): ParamPair[] {
  // get_param_pairs' validation: name=value pairs separated by ','; no ',,' or '==' and ends in a value
  let last = ',';
  let bad = false;
  for (const ch of text) {
    if (ch === ',') {
      if (last === ',') {
        bad = true;
        break;
      }
      last = ',';
    } else if (ch === '=') {
      if (last === '=') {
        bad = true;
        break;
      }
      last = '=';
    }
  }
  if (bad || last !== '=') throw new TrecMeasureError(`-m ${name}.${text}: malformed pair parameters (expected name=value[,name=value...], e.g. ndcg.1=0,2=3 or rbp.p=0.95)`);
  return text.split(',').map((kv) => {
    const eq = kv.indexOf('=');
    const v = kv.slice(eq + 1);
    return { name: kv.slice(0, eq), value: finiteParam(`${name}.${text}`, v, atof(v)) };
  });
}

export interface Selection {
  measures: Selected[];
  numValues: number;
}

/**
 * `-m` values -> selected measures in trec_eval's order (trec_eval.c mark_measure + init_meas):
 * a nickname marks its list; `name.params` marks `name` and records the params (the FIRST `-m`
 * with params for a measure wins); no `-m` means `official`.
 */
export function selectMeasures(specs: readonly string[]): Selection {
  const marked = new Set<string>();
  const params = new Map<string, string>();
  const known = new Set(TREC_MEASURES.map((d) => d.name));
  const cutNames = new Set(TREC_MEASURES.filter((d) => d.kind === 'cut_long' || d.kind === 'cut_double').map((d) => d.name));
  for (const spec0 of specs.length ? specs : ['official']) {
    let spec = spec0;
    // a printed name (`P_10`, `ndcg_cut_10`, `iprec_at_recall_0.50`) selects that one cutoff (rankgate's shorthand)
    const printed = /^(.+)_(\d+(?:\.\d+)?)$/.exec(spec);
    if (printed && !known.has(spec) && cutNames.has(printed[1]!)) spec = `${printed[1]}.${printed[2]}`;
    const dot = spec.indexOf('.');
    const name = dot >= 0 ? spec.slice(0, dot) : spec;
    if (dot >= 0) {
      const p = spec.slice(dot + 1);
      if (p === '') throw new TrecMeasureError(`-m ${spec}: empty parameter list after '.' (e.g. P.5,10)`);
      if (!params.has(name)) params.set(name, p);
    }
    const nick = NICKNAMES[name];
    if (nick) for (const n of nick) marked.add(n);
    else if (known.has(name)) marked.add(name);
    else if (name === 'all_prefs' || name === 'prefs' || name === 'qrels_jg') {
      throw new TrecMeasureError(`-m ${name}: preference and judgment-group measures need trec_eval's -R prefs/qrels_prefs/qrels_jg formats, which rankgate does not read`);
    } else {
      throw new TrecMeasureError(`unknown measure '${spec0}'${didYouMean(name, [...known, ...Object.keys(NICKNAMES)])}`);
    }
  }
  const out: Selected[] = [];
  let off = 0;
  for (const def of TREC_MEASURES) {
    if (!marked.has(def.name)) continue;
    const text = params.get(def.name);
    let p: Params = def.defaults ?? [];
    let names = [def.name];
    switch (def.kind) {
      case 'cut_long':
        if (text !== undefined) p = parseCutLong(def.name, text);
        names = N(p).map((k) => `${def.name}_${k}`);
        break;
      case 'cut_double':
        if (text !== undefined) p = parseCutDouble(def.name, text);
        names = N(p).map((k) => `${def.name}_${formatFixed(k, 2)}`);
        break;
      case 'p_double':
      case 'relstring':
        if (text !== undefined) {
          p = text.split(',').map((t) => finiteParam(`${def.name}.${text}`, t, atof(t)));
          names = [`${def.name}_${text}`];
        }
        if (def.name === 'utility' && N(p).length !== 4) {
          throw new TrecMeasureError(`-m utility.${text}: needs exactly 4 coefficients (trec_eval: improper number of coefficients)`);
        }
        break;
      case 'p_pair':
        p = text !== undefined ? parsePairs(def.name, text) : [];
        if (text !== undefined) names = [`${def.name}_${text}`];
        break;
      default:
        if (text !== undefined && def.kind !== 'runid' && def.kind !== 'num_q') {
          // trec_eval ignores params of parameterless measures; so do we
        }
    }
    const width = def.kind === 'runid' || def.kind === 'num_q' ? 1 : names.length;
    out.push({ def, params: p, names, off });
    off += width;
  }
  return { measures: out, numValues: off };
}

function didYouMean(name: string, known: string[]): string {
  let best = '';
  let bd = Infinity;
  for (const k of known) {
    const d = lev(name.toLowerCase(), k.toLowerCase());
    if (d < bd) {
      bd = d;
      best = k;
    }
  }
  return bd <= Math.max(2, Math.floor(name.length / 3)) ? ` (did you mean '${best}'?)` : ` (see rankgate trec-eval --help for the list)`;
}
function lev(a: string, b: string): number {
  const dp = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    let prev = dp[0]!;
    dp[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const t = dp[j]!;
      dp[j] = Math.min(dp[j]! + 1, dp[j - 1]! + 1, prev + (a[i - 1] === b[j - 1] ? 0 : 1));
      prev = t;
    }
  }
  return dp[b.length]!;
}

export interface TrecEvalOptions {
  /** -q */
  perQuery?: boolean;
  /** -c */
  complete?: boolean;
  /** -l (default 1) */
  relevanceLevel?: number;
  /** -N (default 0) */
  numDocsInColl?: number;
  /** -M (default unlimited) */
  maxPerTopic?: number;
  /** -J */
  judgedOnly?: boolean;
  /** -n: no summary lines */
  noSummary?: boolean;
  /** -D level.qid: evaluate only this query */
  onlyQuery?: string;
  /** -Z: print z-scores against these means and deviations */
  zscores?: ZScores;
  runFileName: string;
}

/** A query the run cannot be evaluated on (trec_eval stops; so do we, with one line). */
export class TrecEvalError extends Error {}

const BOGUS = 'ceci_nest_pas_un_docno';

/**
 * Order one query's retrieved docs as trec_eval does (sim descending, ties by docno descending),
 * keep the first `max`, refuse duplicates among them, apply -J, and return the relevance values.
 */
function rankQuery(rq: RunQuery, max: number, judgedOnly: boolean, qid: string): { list: Int32Array; n: number } {
  const n = rq.n;
  const sim = rq.sim;
  let order: Int32Array | null = null;
  let bySim = true; // sims non-increasing in file order (ties may still need docno order)
  let exact = true; // ... and every tie already docno-descending
  for (let i = 0; i + 1 < n; i++) {
    const a = sim[i]!;
    const b = sim[i + 1]!;
    if (a < b || a !== a || b !== b) {
      bySim = false;
      break;
    }
    if (a === b && exact && rq.cmpDoc(i, i + 1) < 0) exact = false;
  }
  if (!bySim || !exact) {
    order = new Int32Array(n);
    for (let k = 0; k < n; k++) order[k] = k;
    if (bySim) {
      // only runs of equal sims need sorting, by docno descending
      for (let a = 0; a < n; ) {
        let b = a + 1;
        while (b < n && sim[b] === sim[a]) b++;
        if (b - a > 1) order.subarray(a, b).sort((x, y) => rq.cmpDoc(y, x));
        a = b;
      }
    } else {
      order.sort((x, y) => {
        const sx = sim[x]!;
        const sy = sim[y]!;
        if (sx > sy) return -1;
        if (sx < sy) return 1;
        return rq.cmpDoc(y, x);
      });
    }
  }
  const m = Math.min(n, max);
  // duplicates among the kept docs (trec_eval form_res_rels: "duplicate docs")
  let size = 16;
  while (size < m * 2) size <<= 1;
  const table = new Int32Array(size).fill(-1);
  const mask = size - 1;
  for (let r = 0; r < m; r++) {
    const i = order ? order[r]! : r;
    let s = rq.hash[i]! & mask;
    for (;;) {
      const j = table[s]!;
      if (j === -1) {
        table[s] = i;
        break;
      }
      if (rq.hash[j] === rq.hash[i] && rq.cmpDoc(i, j) === 0) {
        throw new TrecEvalError(`query '${qid}' retrieves document '${rq.docno(i)}' twice (trec_eval refuses duplicate docs in a ranking)`);
      }
      s = (s + 1) & mask;
    }
  }
  const list = new Int32Array(m);
  let k = 0;
  for (let r = 0; r < m; r++) {
    const rel = rq.rel[order ? order[r]! : r]!;
    if (judgedOnly && rel < 0) continue;
    list[k++] = rel;
  }
  return { list, n: k };
}


/**
 * Score one query into `q` (zeroed first) and return its relstring. A query absent from the run
 * gets trec_eval's stand-in ranking for `-c`: one doc 'ceci_nest_pas_un_docno' with sim 1.0, then
 * trec_eval.c's "clean up leftovers" (matched on the PRINTED value name, as trec_eval does, so
 * `utility_2,-1,0,0` or `relstring_20` are not cleaned).
 */
function scoreQuery(
  qrels: Qrels,
  qq: QrelsQuery,
  rq: RunQuery | undefined,
  sel: Selection,
  ctx: TrecContext,
  opts: { maxPerTopic?: number; judgedOnly?: boolean },
  q: Float64Array,
): string {
  const max = opts.maxPerTopic ?? Infinity;
  let list: Int32Array;
  let n: number;
  if (rq) ({ list, n } = rankQuery(rq, max, !!opts.judgedOnly, qq.qid));
  else {
    const enc = new Uint8Array([...BOGUS].map((c) => c.charCodeAt(0)));
    const r = qrels.lookup(qq.index, enc, 0, enc.length);
    const rel = r === undefined ? RELVALUE_NONPOOL : r < 0 ? -2 : r;
    list = new Int32Array([rel]);
    n = max >= 1 && !(opts.judgedOnly && rel < 0) ? 1 : 0;
  }
  const rr = makeResRels(list, n, qq.relLevels, ctx.relevanceLevel);
  q.fill(0);
  let rs = '';
  for (const m of sel.measures) {
    if (m.def.kind === 'num_q') q[m.off] = 1;
    else if (m.def.kind === 'relstring') rs = relstring(rr, N(m.params)[0]!);
    else m.def.calc(rr, ctx, m.params, q, m.off);
  }
  if (!rq) {
    for (const m of sel.measures) {
      m.names.forEach((nm, k) => {
        if (nm === 'num_ret' || nm === 'utility' || nm === 'rbp_resid' || nm.startsWith('unj')) q[m.off + k] = 0;
        if (nm === 'relstring') rs = '';
      });
    }
  }
  return rs;
}

/**
 * Run trec_eval over parsed qrels and a fully read run. `write` receives the output text in
 * pieces. Throws TrecEvalError for a qrels query absent from the run without -c (trec_eval 10
 * stops with "result qid not found"), duplicates, and when no query can be evaluated.
 */
export function trecEval(qrels: Qrels, run: RunReader, sel: Selection, opts: TrecEvalOptions, write: (s: string) => void): void {
  const ctx: TrecContext = { relevanceLevel: opts.relevanceLevel ?? 1, numDocsInColl: opts.numDocsInColl ?? 0 };
  const accum = new Float64Array(sel.numValues);
  const q = new Float64Array(sel.numValues);
  let numQueries = 0;
  const pad = (s: string) => (s.length >= 22 ? s : s + ' '.repeat(22 - s.length));
  const Z = opts.zscores;
  const padded = sel.measures.map((m) => m.names.map((n) => (Z ? 'Z' : '') + pad(n)));
  // value slot names for -Z (runid has no value in trec_eval)
  const slots: (string | null)[] = new Array(sel.numValues).fill(null);
  for (const m of sel.measures) if (m.def.kind !== 'runid') m.names.forEach((n, k) => (slots[m.off + k] = n));
  if (run.lines === 0) throw new TrecEvalError(`${opts.runFileName}: the run has no result lines`);
  let buf = '';
  for (const qq of qrels.queries) {
    if (opts.onlyQuery !== undefined && opts.onlyQuery !== qq.qid) continue;
    const rq = run.queries.get(qq.index);
    if (!rq && !opts.complete) {
      throw new TrecEvalError(
        `query '${qq.qid}' has judgments but no results in ${opts.runFileName} (trec_eval 10 stops here; use -c to count it as 0, or remove its judgments)`,
      );
    }
    const rs = scoreQuery(qrels, qq, rq, sel, ctx, opts, q);
    if (Z) Z.convert(qq.qid, slots, q);
    for (let mi = 0; mi < sel.measures.length; mi++) {
      const m = sel.measures[mi]!;
      const d = m.def;
      if (d.avg !== 'none') for (let k = 0; k < m.names.length; k++) accum[m.off + k]! += q[m.off + k]!;
      if (opts.perQuery && d.perQuery) {
        const names = padded[mi]!;
        if (d.kind === 'relstring') buf += `${pad(m.names[0]!)}\t${qq.qid}\t'${rs}'\n`;
        else if (d.kind === 'long' && !Z) buf += `${names[0]}\t${qq.qid}\t${Math.trunc(q[m.off]!)}\n`;
        else for (let k = 0; k < names.length; k++) buf += `${names[k]}\t${qq.qid}\t${fmt4(q[m.off + k]!)}\n`;
      }
    }
    if (buf.length > 1 << 16) {
      write(buf);
      buf = '';
    }
    numQueries++;
  }
  if (numQueries === 0) throw new TrecEvalError('no query has both results and judgments');
  const nq = opts.complete ? qrels.queries.length : numQueries;
  if (!opts.noSummary) {
    for (let mi = 0; mi < sel.measures.length; mi++) {
      const m = sel.measures[mi]!;
      const names = padded[mi]!;
      const d = m.def;
      switch (d.avg) {
        case 'none':
          if (d.kind === 'runid') buf += `${pad('runid')}\tall\t${run.runid}\n`;
          break;
        case 'num_q':
          buf += `${names[0]}\tall\t${Z ? fmt4(nq) : nq}\n`;
          break;
        case 'sum':
          buf += `${names[0]}\tall\t${Z ? fmt4(accum[m.off]!) : Math.trunc(accum[m.off]!)}\n`;
          break;
        case 'num_rel': {
          // m_num_rel.c: with -c the summary recounts rel > 0 over ALL qrels, ignoring -l
          let v = accum[m.off]!;
          if (opts.complete) {
            v = 0;
            for (const x of qrels.queries) v += x.numPositive;
          }
          buf += `${names[0]}\tall\t${Z ? fmt4(v) : Math.trunc(v)}\n`;
          break;
        }
        case 'gm': {
          let s = accum[m.off]!;
          if (opts.complete) s += (nq - numQueries) * Math.log(0.00001);
          buf += `${names[0]}\tall\t${fmt4(nq > 0 ? Math.exp(s / nq) : s)}\n`;
          break;
        }
        default:
          for (let k = 0; k < names.length; k++) buf += `${names[k]}\tall\t${fmt4(nq ? accum[m.off + k]! / nq : accum[m.off + k]!)}\n`;
      }
    }
  }
  write(buf);
}

/**
 * One measure's value for every query of the qrels (rankgate compare): the run is ranked and
 * scored exactly as by trec-eval; a query absent from the run gets trec_eval's `-c` value (0 for
 * nearly every measure). `spec` is one `-m` value that names exactly one printed column
 * (`ndcg_cut_10`, `ndcg_cut.10`, `map`, `P_5`).
 */
export function perQueryValues(
  qrels: Qrels,
  run: RunReader,
  spec: string,
  opts: { relevanceLevel?: number; runFileName: string },
): { name: string; values: Map<string, number>; missing: string[] } {
  const sel = selectMeasures([spec]);
  const cols = sel.measures.filter((m) => m.def.perQuery && m.def.kind !== 'relstring');
  if (cols.length !== 1 || cols[0]!.names.length !== 1) {
    throw new TrecMeasureError(`'${spec}' names ${cols.reduce((n, m) => n + m.names.length, 0)} per-query measures; give exactly one (e.g. ndcg_cut_10)`);
  }
  const name = cols[0]!.names[0]!;
  const values = new Map<string, number>();
  const missing: string[] = [];
  const ctx: TrecContext = { relevanceLevel: opts.relevanceLevel ?? 1, numDocsInColl: 0 };
  const q = new Float64Array(sel.numValues);
  for (const qq of qrels.queries) {
    const rq = run.queries.get(qq.index);
    if (!rq) missing.push(qq.qid);
    scoreQuery(qrels, qq, rq, sel, ctx, {}, q);
    values.set(qq.qid, q[cols[0]!.off]!);
  }
  return { name, values, missing };
}

/** trec_eval.h MISSING_ZSCORE_VALUE */
export const MISSING_ZSCORE = -1000000;

/**
 * A `-Z` file (get_zscores.c): lines `qid measure mean stddev`, exactly 4 ASCII-whitespace fields,
 * no comments or blank lines; sorted by qid then measure (strcmp) for trec_eval's binary searches.
 */
export class ZScores {
  private constructor(
    private qids: string[],
    private blockStart: number[],
    private blockLen: number[],
    private meas: string[],
    private mean: number[],
    private sd: number[],
  ) {}

  static parse(text: string, fileName: string): ZScores {
    // get_zscores.c refuses a file of 0 bytes ("Cannot read zscores file")
    if (text.length === 0) throw new TrecMeasureError(`${fileName}: the z-score file is empty; expected lines 'qid measure mean stddev' (trec_eval refuses an empty -Z file too)`);
    const rows: [string, string, number, number][] = [];
    const lines = text.split('\n');
    if (lines[lines.length - 1] === '') lines.pop();
    lines.forEach((l, i) => {
      const f = l.split(/[ \t\v\f\r]+/).filter((x) => x !== '');
      if (f.length !== 4) throw new TrecMeasureError(`${fileName}:${i + 1}: expected 4 fields 'qid measure mean stddev' in a z-score line, found ${f.length}`);
      const [mean, sd] = [atof(f[2]!), atof(f[3]!)];
      for (const [what, v, t] of [['mean', mean, f[2]!], ['stddev', sd, f[3]!]] as const) {
        if (Number.isNaN(v)) throw new TrecMeasureError(`${fileName}:${i + 1}: ${what} '${t}' reads as NaN; expected a number (rankgate refuses it rather than guess trec_eval's NaN sign)`);
      }
      rows.push([f[0]!, f[1]!, mean, sd]);
    });
    const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
    rows.sort((a, b) => cmp(a[0], b[0]) || cmp(a[1], b[1]));
    const qids: string[] = [];
    const start: number[] = [];
    const len: number[] = [];
    rows.forEach((r, i) => {
      if (!qids.length || qids[qids.length - 1] !== r[0]) {
        qids.push(r[0]);
        start.push(i);
        len.push(0);
      }
      len[len.length - 1]!++;
    });
    return new ZScores(qids, start, len, rows.map((r) => r[1]), rows.map((r) => r[2]), rows.map((r) => r[3]));
  }

  /** convert_zscores.c find_qid / find_meas, including their inclusive upper bound (end = num). */
  private find(qid: string, meas: string): number {
    let s = 0;
    let e = this.qids.length;
    let qi = -1;
    while (s <= e) {
      const c = (s + e) >> 1;
      if (c >= this.qids.length) return -2;
      const r = qid < this.qids[c]! ? -1 : qid > this.qids[c]! ? 1 : 0;
      if (r < 0) e = c - 1;
      else if (r > 0) s = c + 1;
      else {
        qi = c;
        break;
      }
    }
    if (qi < 0) return -2;
    const base = this.blockStart[qi]!;
    s = 0;
    e = this.blockLen[qi]!;
    while (s <= e) {
      const c = (s + e) >> 1;
      if (base + c >= this.meas.length) return -1;
      const m = this.meas[base + c]!;
      const r = meas < m ? -1 : meas > m ? 1 : 0;
      if (r < 0) e = c - 1;
      else if (r > 0) s = c + 1;
      else return base + c;
    }
    return -1;
  }

  /** te_convert_to_zscore: every value slot of one query becomes (v - mean) / stddev. */
  convert(qid: string, slots: readonly (string | null)[], q: Float64Array): void {
    for (let i = 0; i < slots.length; i++) {
      const name = slots[i];
      if (name === null) continue;
      const j = this.find(qid, name);
      if (j === -2) {
        for (let k = 0; k < slots.length; k++) if (slots[k] !== null) q[k] = MISSING_ZSCORE;
        return;
      }
      if (j < 0) q[i] = MISSING_ZSCORE;
      else if (this.sd[j]) q[i] = (q[i]! - this.mean[j]!) / this.sd[j]!;
      else q[i] = q[i] === this.mean[j] ? 0 : MISSING_ZSCORE;
    }
  }
}
