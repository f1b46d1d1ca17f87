/**
 * Routing assertion (DES-058): technique_boundary -> practice_bridge, adversarial -> no_results (or nothing
 * above `noResultsThreshold`), crisis-adjacent (expect_safety) -> safety flag, everything else -> search
 * results. namedScores: routing_ok, routing_ok_<category>, n_routing, n_routing_<category>, safety_ok/n_safety.
 *
 *   - type: javascript
 *     value: file://assertions/routing.ts:routing
 *     config: { noResultsThreshold: 0.3 }   # optional
 */
import { routingNamedScores, scoreRouting } from '../src/report/score.ts';
import { goldenFrom, outputFrom, type AssertionContext, type GradingResult } from './common.ts';

export function routing(output: unknown, context: AssertionContext): GradingResult {
  const golden = goldenFrom(context);
  const out = outputFrom(output);
  const t = context.config?.noResultsThreshold;
  const r = scoreRouting(golden, out, t === undefined ? {} : { noResultsThreshold: Number(t) });
  return {
    pass: r.ok,
    score: r.ok ? 1 : 0,
    reason: `routing ${r.ok ? 'ok' : 'FAIL'}: ${r.reason}`,
    namedScores: routingNamedScores(golden.category, r, out.latencyMs),
  };
}

