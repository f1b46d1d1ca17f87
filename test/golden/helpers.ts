import { mkdtempSync, rmSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { writeFileAtomic } from '../../src/util/atomic.ts';
import { renderGolden, type OutputFormat } from '../../src/golden/index.ts';
import type { GoldenQuery } from '../../src/golden/schema.ts';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const FIX = join(ROOT, 'test', 'fixtures', 'golden');

export function tempDir(t: { after: (fn: () => void) => void }): string {
  const d = mkdtempSync(join(tmpdir(), 'rankgate-golden-'));
  t.after(() => rmSync(d, { recursive: true, force: true }));
  return d;
}

export async function writeAs(format: OutputFormat, qs: GoldenQuery[], meta: Record<string, unknown> | undefined, out: string): Promise<Map<string, string>> {
  const files = await renderGolden(format, qs, meta, out);
  for (const [p, text] of files) writeFileAtomic(p, text);
  return files;
}

export function read(p: string): string {
  return readFileSync(p, 'utf8');
}

/** Canonical queries without `origin` (which differs by format by design). */
export function withoutOrigin(qs: GoldenQuery[]): GoldenQuery[] {
  return qs.map(({ origin: _o, ...q }) => q as GoldenQuery);
}
