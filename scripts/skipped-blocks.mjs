/**
 * The tests inside a skipped `describe` block, for scripts/run-tests.mjs: Node's test runner never runs a skipped
 * suite's body, so its tests send no event at all and would vanish from the count. They are read from the test
 * file's source instead (TypeScript's parser; nothing of the file is executed, so a block skipped because its
 * fixture is missing has no side effect).
 *
 * testsInSkippedBlock(file, name, nesting) → the block's tests as [{ name, repeated }] (`outer › inner › test` for
 * nested blocks; `repeated` when the call sits in a loop or callback, so it stands for one or more tests), [] for a
 * block without a test, or undefined when the block cannot be found by its name (a computed name).
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
let ts;

const SUITES = new Set(['describe', 'suite']);
const TESTS = new Set(['it', 'test']);

/** `describe`, `describe.skip`, `it.only`, … → ['describe', 'skip']; anything else → undefined. */
function callee(node) {
  const e = node.expression;
  if (ts.isIdentifier(e)) return [e.text];
  if (ts.isPropertyAccessExpression(e) && ts.isIdentifier(e.expression) && ['skip', 'todo', 'only'].includes(e.name.text)) return [e.expression.text, e.name.text];
  return undefined;
}

/** The literal name of a test or block call ('x', "x", `x`), or a template's text with ${…} kept as written. */
function nameOf(node, source) {
  const a = node.arguments[0];
  if (!a) return undefined;
  if (ts.isStringLiteral(a) || ts.isNoSubstitutionTemplateLiteral(a)) return { text: a.text, literal: true };
  if (ts.isTemplateExpression(a)) return { text: a.getText(source).slice(1, -1), literal: false };
  return undefined;
}

/** The function argument of a test or block call (its last function-valued argument). */
function bodyOf(node) {
  for (let i = node.arguments.length - 1; i >= 0; i--) {
    const a = node.arguments[i];
    if (ts.isArrowFunction(a) || ts.isFunctionExpression(a)) return a;
  }
  return undefined;
}

const LOOPS = (n) =>
  ts.isForStatement(n) || ts.isForOfStatement(n) || ts.isForInStatement(n) || ts.isWhileStatement(n) || ts.isDoStatement(n) || ts.isArrowFunction(n) || ts.isFunctionExpression(n) || ts.isFunctionDeclaration(n);

/** Every test call under `body` (a block's function), descending into nested blocks, not into test bodies. */
function collect(body, source, prefix, repeated, out) {
  const visit = (n, rep) => {
    if (ts.isCallExpression(n)) {
      const c = callee(n);
      if (c && TESTS.has(c[0])) {
        out.push({ name: prefix + (nameOf(n, source)?.text ?? '(a test with a computed name)'), repeated: rep });
        return;
      }
      if (c && SUITES.has(c[0])) {
        const inner = bodyOf(n);
        if (inner) collect(inner, source, `${prefix}${nameOf(n, source)?.text ?? '(a block with a computed name)'} › `, rep, out);
        return;
      }
    }
    ts.forEachChild(n, (k) => visit(k, rep || LOOPS(k)));
  };
  ts.forEachChild(body.body, (k) => visit(k, repeated || LOOPS(k)));
}

export function testsInSkippedBlock(file, name, nesting) {
  ts ??= require('typescript');
  let text;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, file.endsWith('x') ? ts.ScriptKind.TSX : ts.ScriptKind.TS);
  const found = [];
  // blocks at the given nesting (counted in enclosing blocks) whose literal name is the event's name
  const visit = (n, depth) => {
    if (ts.isCallExpression(n)) {
      const c = callee(n);
      if (c && SUITES.has(c[0])) {
        const nm = nameOf(n, source);
        const body = bodyOf(n);
        if (depth === nesting && nm?.literal && nm.text === name && body) found.push(body);
        if (body) ts.forEachChild(body.body, (k) => visit(k, depth + 1));
        return;
      }
    }
    ts.forEachChild(n, (k) => visit(k, depth));
  };
  visit(source, 0);
  if (found.length !== 1) return undefined;
  const out = [];
  collect(found[0], source, '', false, out);
  return out;
}
