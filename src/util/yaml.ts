/**
 * YAML for user files (golden sets, routing.yaml, gate.yaml, front matter), refused in bounded time when
 * pathological. js-yaml shares one object for every use of an alias, so loading an "alias bomb" (each level
 * referring to the previous one ten times) is quick, but anything that walks the result (validation, JSON,
 * copies) visits the fully expanded tree: 10^9 nodes from under 1 KB. loadYaml counts the expanded tree with
 * a budget and refuses past it, naming the file; it also refuses cyclic documents (an alias inside its own
 * anchor). The count stops at the budget, so the check itself is bounded.
 */
import yaml from 'js-yaml';
import { UserError } from '../errors.ts';

/** Expanded nodes a user YAML file may hold (the 86k-query golden set is ~2M nodes in JSON; YAML ones are small). */
export const MAX_YAML_NODES = 5_000_000;

export interface LoadYamlOptions {
  /** Default yaml.CORE_SCHEMA (no timestamps or other implicit types beyond the JSON-ish core). */
  schema?: yaml.Schema;
  /** Default MAX_YAML_NODES. */
  maxNodes?: number;
}

/** Parse `text` (from `file`); a syntax error or an over-budget/cyclic document is a UserError naming the file. */
export function loadYaml(text: string, file: string, opts: LoadYamlOptions = {}): unknown {
  let doc: unknown;
  try {
    doc = yaml.load(text, { filename: file, schema: opts.schema ?? yaml.CORE_SCHEMA });
  } catch (e) {
    const ye = e as { mark?: { line: number; column: number }; reason?: string; message: string };
    const loc = ye.mark ? `:${ye.mark.line + 1}:${ye.mark.column + 1}` : '';
    throw new UserError(`${file}${loc}: not valid YAML (${ye.reason ?? ye.message.split('\n')[0]})`);
  }
  checkExpandedSize(doc, file, opts.maxNodes ?? MAX_YAML_NODES);
  return doc;
}

/** Throws a UserError when `doc`, fully expanded, has more than `max` nodes or contains a cycle. */
export function checkExpandedSize(doc: unknown, file: string, max: number = MAX_YAML_NODES): void {
  let count = 0;
  const onPath = new Set<object>();
  const walk = (v: unknown): void => {
    if (++count > max) {
      throw new UserError(
        `${file}: refused: the document expands to more than ${max.toLocaleString('en-US')} values (YAML aliases such as *name reused many times); write the values out or split the file`,
      );
    }
    if (v === null || typeof v !== 'object') return;
    if (onPath.has(v)) throw new UserError(`${file}: refused: a YAML alias refers to a value that contains it (a cycle)`);
    onPath.add(v);
    if (Array.isArray(v)) for (const x of v) walk(x);
    else for (const k of Object.keys(v)) walk((v as Record<string, unknown>)[k]);
    onPath.delete(v);
  };
  walk(doc);
}
