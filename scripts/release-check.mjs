#!/usr/bin/env node
/**
 * Before a release publishes anything (.github/workflows/release.yml): the tag names package.json's version
 * (v<version>), and CHANGELOG.md has that version's section. `--notes FILE` writes the section (the GitHub release's
 * text). Exit 0 when both hold, 2 with one line each when not.
 *
 *   node scripts/release-check.mjs v0.2.0 [--notes release-notes.md]
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

/** The section of `version` in a Keep a Changelog text (its lines after the heading, up to the next version), or null. */
export function changelogSection(text, version) {
  const lines = text.split('\n');
  const start = lines.findIndex((l) => new RegExp(`^## \\[${version.replace(/[.+]/g, (c) => `\\${c}`)}\\] - \\d{4}-\\d{2}-\\d{2}\\s*$`).test(l));
  if (start < 0) return null;
  let end = lines.findIndex((l, i) => i > start && (/^## \[/.test(l) || /^\[[^\]]+\]: /.test(l)));
  if (end < 0) end = lines.length;
  return lines.slice(start + 1, end).join('\n').trim();
}

export function releaseProblems(tag, pkg, changelog) {
  const out = [];
  if (!/^v\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$/.test(tag ?? '')) out.push(`tag ${JSON.stringify(tag)}: expected v<major>.<minor>.<patch>, e.g. v${pkg.version}`);
  else if (tag !== `v${pkg.version}`) out.push(`tag ${tag} does not name package.json's version ${pkg.version}: bump the version (npm version ${tag.slice(1)} --no-git-tag-version) or tag v${pkg.version}`);
  if (pkg.private) out.push('package.json: "private": true; the registry refuses it');
  const section = changelogSection(changelog, pkg.version);
  if (section === null) out.push(`CHANGELOG.md: no section "## [${pkg.version}] - YYYY-MM-DD" (Keep a Changelog): write what this version changes`);
  else if (!section) out.push(`CHANGELOG.md: the section of ${pkg.version} is empty`);
  return out;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const args = process.argv.slice(2);
  const tag = args[0];
  const ni = args.indexOf('--notes');
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
  const changelog = readFileSync(join(root, 'CHANGELOG.md'), 'utf8');
  const problems = releaseProblems(tag, pkg, changelog);
  if (problems.length) {
    for (const p of problems) console.error(`release-check: ${p}`);
    process.exit(2);
  }
  if (ni >= 0) writeFileSync(args[ni + 1], changelogSection(changelog, pkg.version) + '\n');
  console.log(`release-check: ${tag} = rankgate ${pkg.version}, CHANGELOG section present`);
}
