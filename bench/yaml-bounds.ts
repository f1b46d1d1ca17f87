/**
 * How fast user YAML is refused when its aliases expand past the budget (src/util/yaml.ts), and what an ordinary
 * file costs: parse + expanded-size measure, median of 5 runs, and the heap growth of one run.
 *
 *   node --import tsx bench/yaml-bounds.ts
 */
import { loadYaml, precheckYaml } from '../src/util/yaml.ts';

function aliasBomb(leaf: string, width: number, levels: number): string {
  const lines = [`l0: &l0 [${Array(width).fill(JSON.stringify(leaf)).join(', ')}]`];
  for (let i = 1; i <= levels; i++) lines.push(`l${i}: &l${i} [${Array(width).fill(`*l${i - 1}`).join(', ')}]`);
  return `${lines.join('\n')}\n`;
}

const merge = ['m0: &m0 {a: "x"}'];
for (let i = 1; i <= 8; i++) merge.push(`m${i}: &m${i} {<<: [${Array(10).fill(`*m${i - 1}`).join(', ')}], k${i}: [${Array(10).fill(`*m${i - 1}`).join(', ')}]}`);

const cases: [string, string, (t: string, f: string) => unknown][] = [
  ['million strings of 1.7 KB (issue 25)', aliasBomb('x'.repeat(1700), 10, 5), loadYaml],
  ['10^9 values (9 levels x 10)', aliasBomb('x', 10, 8), loadYaml],
  ['1,111 copies of a 100 KB string', aliasBomb('y'.repeat(100_000), 1, 0) + aliasBomb('y', 10, 3).split('\n').slice(1).join('\n'), loadYaml],
  ['merge-key chain, 8 levels (promptfoo pre-check)', merge.join('\n'), precheckYaml],
  ['ordinary: 100,000 list items, no aliases', `queries:\n${Array.from({ length: 100_000 }, (_, i) => `  - q${i}`).join('\n')}\n`, loadYaml],
];

for (const [name, text, fn] of cases) {
  const times: number[] = [];
  let outcome = 'accepted';
  let heap = 0;
  for (let i = 0; i < 5; i++) {
    globalThis.gc?.();
    const h0 = process.memoryUsage().heapUsed;
    const t0 = performance.now();
    try {
      fn(text, 'bench.yaml');
    } catch (e) {
      outcome = (e as Error).message.replace(/^bench\.yaml:?\s*/, '').slice(0, 70);
    }
    times.push(performance.now() - t0);
    heap = Math.max(heap, process.memoryUsage().heapUsed - h0);
  }
  times.sort((a, b) => a - b);
  console.log(`${name.padEnd(48)} ${(text.length / 1024).toFixed(1).padStart(7)} KB  ${times[2]!.toFixed(1).padStart(7)} ms  heap +${(heap / 1048576).toFixed(1)} MB  ${outcome}`);
}
