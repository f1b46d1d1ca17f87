/**
 * Routing assertion (DES-058), only where the golden entry states an expectation (expected_routing, or
 * expect_safety: true; see statedRoute in src/results/score.ts): technique_boundary entries that say
 * practice_bridge must reach the Practice Bridge, no_results entries must return nothing (or nothing above
 * `noResultsThreshold`), crisis-adjacent entries must raise the safety flag, stated `search` must return results.
 * A query whose entry states nothing passes unscored ("routing not checked"). The route is part of the row's
 * golden expectation: a wrong stated route fails the row.
 * namedScores: routing_ok, routing_ok_<category>, n_routing, n_routing_<category>, "4 routing" (checked rows),
 * safety_ok/n_safety, and the provider's latency_ms/n_latency (every row; the whole pipeline).
 *
 *   - type: javascript
 *     value: file://assertions/routing.ts:routing
 *     config: { noResultsThreshold: 0.3 }   # optional
 */
import { routingNamedScores, scoreRouting } from '../src/results/score.ts';
import { goldenFrom, outputFrom, type AssertionContext, type GradingResult } from './common.ts';

export function routing(output: unknown, context: AssertionContext): GradingResult {
  const golden = goldenFrom(context);
  const out = outputFrom(output, context);
  const t = context.config?.noResultsThreshold;
  const r = scoreRouting(golden, out, t === undefined ? {} : { noResultsThreshold: Number(t) });
  const namedScores = routingNamedScores(golden.category, r, out.latencyMs);
  if (!r) return { pass: true, score: 1, reason: `routing not checked: the golden entry states no routing expectation (routed to ${out.routing?.route ?? 'unknown'})`, namedScores };
  return { pass: r.ok, score: r.ok ? 1 : 0, reason: `routing ${r.ok ? 'ok' : 'FAIL'}: ${r.reason}`, namedScores };
}
