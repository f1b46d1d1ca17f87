// Does node_modules hold exactly what package-lock.json names? (npm's hidden lockfile node_modules/.package-lock.json,
// written by `npm ci`, lists every installed package with its version.) Exit 0 when every package path of the
// lockfile is installed at the lockfile's version and nothing else is; 1 otherwise (a package added by hand, a
// different version, an interrupted install). Used by .ci/leg-node24.sh to reuse leg 1's install.
//   node scripts/lock-matches.mjs [DIR]   (DIR: the folder with package-lock.json and node_modules; default .)
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const dir = process.argv[2] ?? '.';
try {
  const want = JSON.parse(readFileSync(join(dir, 'package-lock.json'), 'utf8')).packages ?? {};
  const have = JSON.parse(readFileSync(join(dir, 'node_modules', '.package-lock.json'), 'utf8')).packages ?? {};
  const keys = (o) => Object.keys(o).filter((k) => k.startsWith('node_modules/'));
  const w = keys(want);
  const h = new Set(keys(have));
  // npm leaves packages for other platforms (optional, not installed) out of the hidden lockfile
  const missing = w.filter((k) => !h.has(k) && !want[k].optional);
  const extra = [...h].filter((k) => !(k in want));
  const changed = w.filter((k) => h.has(k) && want[k].version !== have[k].version);
  if (missing.length || extra.length || changed.length) {
    console.error(`lock-matches: node_modules differs from package-lock.json: ${missing.length} missing, ${extra.length} extra, ${changed.length} other versions (${[...missing, ...extra, ...changed].slice(0, 3).join(', ')})`);
    process.exit(1);
  }
} catch (e) {
  console.error(`lock-matches: ${e.message.split('\n')[0]}`);
  process.exit(1);
}
