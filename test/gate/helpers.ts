/** Helpers of the gate tests: promptfoo configs over the fixture search service, written with absolute paths. */
import { writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { FIXTURE, ROOT } from '../harness/helpers.ts';

const file = (p: string) => pathToFileURL(p).href;

export interface GateConfig {
  /** column label */
  label?: string;
  /** provider config (module: the fixture service unless url: is given) */
  provider?: Record<string, unknown>;
}

/** Write a promptfoo config (the default assertions and both gate hooks) to DIR/NAME.yaml; returns its path. */
export function writeGateConfig(dir: string, name: string, cfg: GateConfig = {}): string {
  const provider = cfg.provider ?? {};
  const pcfg = { ...(provider.url ? {} : { module: join(FIXTURE, 'fixture-service.ts') }), mode: 'hybrid', topK: 10, chunkSize: 300, ...provider };
  const y = [
    `description: gate test ${name}`,
    `prompts: ['{{query}}']`,
    'providers:',
    `  - id: ${file(join(ROOT, 'providers', 'search.ts'))}`,
    `    label: ${cfg.label ?? 'fixture-hybrid'}`,
    `    config: ${JSON.stringify(pcfg)}`,
    'defaultTest:',
    '  assert:',
    `    - { type: javascript, value: '${file(join(ROOT, 'assertions', 'rank.ts'))}:rank' }`,
    `    - { type: javascript, value: '${file(join(ROOT, 'assertions', 'routing.ts'))}:routing' }`,
    `    - { type: javascript, value: '${file(join(ROOT, 'assertions', 'integrity.ts'))}:integrity' }`,
    `tests: ${file(join(ROOT, 'test', 'gate', 'fixtures', 'tests.ts'))}`,
    'env:',
    "  PROMPTFOO_PASS_RATE_THRESHOLD: '0'",
    'extensions:',
    `  - ${file(join(ROOT, 'assertions', 'gate.ts'))}:beforeAll`,
    `  - ${file(join(ROOT, 'assertions', 'gate.ts'))}:afterAll`,
    '',
  ].join('\n');
  const path = join(dir, `${name}.yaml`);
  writeFileSync(path, y);
  return path;
}

/**
 * A local TCP port nothing listens on: connecting to it is ECONNREFUSED. Chosen BELOW the kernel's ephemeral range
 * (32768-60999 here), where no `listen(0)` of a test running beside this one can land: a port bound and closed inside
 * that range was once handed to another test's fake server (a Bedrock fake answering 429), and promptfoo then retried
 * the "dead" service for 18 minutes. Checked refused before it is returned.
 */
export async function closedPort(): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const port = 20000 + Math.floor(Math.random() * 10000);
    const refused = await new Promise<boolean>((resolve) => {
      const sock = connect({ port, host: '127.0.0.1' });
      sock.once('connect', () => (sock.destroy(), resolve(false)));
      sock.once('error', (e: NodeJS.ErrnoException) => resolve(e.code === 'ECONNREFUSED'));
    });
    if (refused) return port;
  }
  throw new Error('no closed port found in 20000-29999 on 127.0.0.1');
}

type Doc = any; // eslint-disable-line @typescript-eslint/no-explicit-any

/**
 * Recompute a baseline's summary (query count, overall and per-category means and counts) from its per-query entries,
 * as a careful hand editor would: a baseline edited this way is consistent with itself (src/gate/baseline.ts).
 */
export function resummarise(b: Doc): Doc {
  const qs = Object.values(b.queries) as Doc[];
  const mean = (xs: number[]) => (xs.length ? Math.round((xs.reduce((a, x) => a + x, 0) / xs.length) * 1e4) / 1e4 : null);
  const vals = (list: Doc[], k: string) => list.map((q) => q[k]).filter((x: unknown) => typeof x === 'number');
  b.summary.total_queries = qs.length;
  b.summary.overall_recall_at_3 = mean(vals(qs, 'recall_at_3'));
  b.summary.overall_mrr_at_10 = mean(vals(qs, 'mrr'));
  for (const [c, e] of Object.entries(b.summary.categories) as [string, Doc][]) {
    const cq = qs.filter((q) => q.category === c);
    if (!cq.length) delete b.summary.categories[c];
    else {
      e.count = cq.length;
      if (e.recall_at_3 !== undefined) e.recall_at_3 = mean(vals(cq, 'recall_at_3'));
      if (e.mrr_at_10 !== undefined) e.mrr_at_10 = mean(vals(cq, 'mrr'));
      if (e.routing_accuracy !== undefined) e.routing_accuracy = mean(vals(cq, 'routing_ok'));
    }
  }
  return b;
}
