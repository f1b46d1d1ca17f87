/**
 * How soon V8 re-compiles hot WebAssembly with its optimising compiler. PGlite (Postgres compiled to WebAssembly) and
 * the USE-lite embedder run as WebAssembly: V8 first compiles every function with its fast baseline compiler
 * (Liftoff), then re-compiles a function with the optimising one (TurboFan) once it has run through a budget of
 * ~1.8 MB of code (`--wasm-tiering-budget`, Node 20's default 1800000). Postgres's start-up and first query run a
 * lot of code once each, so a short command paid for optimising code it never ran again.
 *
 * Measured on this 2-core machine (user + sys CPU, wall; medians of 3, Node 20.20):
 * - `rankgate search` on the demo index: 2.10 CPU-s, 1.47 s with the default budget; 1.45 CPU-s, 1.09 s with 60000000;
 *   1.27 CPU-s, 1.00 s with no optimising tier at all (`--liftoff-only`);
 * - the demo ingest (161 chunks, embedding dominates): 15.8 CPU-s with the default, 15.9 with 60000000, but 22.7 with
 *   Liftoff only (its hot loops need the optimising tier);
 * - the demo eval (66 queries): 9.3 CPU-s and the same Recall@3 / p95 either way.
 * - hybrid queries at 100,940 chunks (bench/search.ts, 200 queries after 20 warm-up, PGlite): p50 17.5–17.8 ms, p95
 *   27.7–28.1 with the default; p50 20.2–24.6, p95 36.1–37.8 with 60000000 (the hot search code is optimised later).
 * So the CLI's short commands (search, ingest, golden check, embed-cache...) take the budget 60000000 at start
 * (src/cli/index.ts); `rankgate serve`, the provider's search worker in an eval (its latencies are reported) and
 * the benchmarks keep V8's default. `RANKGATE_WASM_TIERING_BUDGET=N` sets another for those commands (`default`:
 * V8's own). Set before the first WebAssembly module is instantiated (the budget is read then).
 */
import { setFlagsFromString } from 'node:v8';
import { UserError } from '../errors.ts';

export const WASM_TIERING_BUDGET = 60_000_000;

let done = false;

export function tuneWasmTiering(): void {
  if (done) return;
  done = true;
  const env = process.env.RANKGATE_WASM_TIERING_BUDGET?.trim();
  if (env === 'default') return;
  if (env && !/^[1-9]\d{0,9}$/.test(env)) {
    throw new UserError(`RANKGATE_WASM_TIERING_BUDGET: '${env}' is not valid: a positive whole number of bytes (e.g. ${WASM_TIERING_BUDGET}) or 'default'`);
  }
  setFlagsFromString(`--wasm-tiering-budget=${env ? Number(env) : WASM_TIERING_BUDGET}`);
}
