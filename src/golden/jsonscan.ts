/**
 * A small strict JSON scanner. JSON.parse does the real parsing (fast); this runs only when something
 * must be located: on a syntax error (JSON.parse on Node 20 does not always say where) it throws
 * JsonSyntaxError with the offset, and for a valid text it records where the values of chosen
 * top-level array elements are, so problems can name a line.
 */

export class JsonSyntaxError extends Error {
  constructor(
    message: string,
    readonly offset: number,
    /** index of the top-level array element being read when the error happened, if any */
    readonly element: number | undefined,
  ) {
    super(message);
  }
}

export type JsonPath = readonly (string | number)[];

/**
 * Report keys given twice in one object (JSON.parse keeps only the last: a second `expected_passages` would
 * silently replace the first), for objects less than `depth` levels deep.
 */
export interface DuplicateKeys {
  depth: number;
  found: (path: JsonPath, offset: number) => void;
}

export function pathKey(path: JsonPath): string {
  return path.join('\u0000');
}

/**
 * Scan `text`. Throws JsonSyntaxError on invalid JSON. When `record` is given, stores the offset of
 * every property key / array element whose path starts with a top-level index in `wanted`
 * (all when `wanted` is undefined), up to `maxDepth` levels deep.
 */
export function scanJson(text: string, record?: Map<string, number>, wanted?: ReadonlySet<number>, maxDepth = 5, dupes?: DuplicateKeys): void {
  const n = text.length;
  let i = 0;
  let top: number | undefined;

  const fail = (msg: string): never => {
    throw new JsonSyntaxError(msg, i, top);
  };
  const ws = () => {
    while (i < n) {
      const c = text.charCodeAt(i);
      if (c === 32 || c === 10 || c === 13 || c === 9) i++;
      else break;
    }
  };
  const describe = (): string => (i >= n ? 'end of file' : `character ${JSON.stringify(text[i])}`);
  const numRe = /-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/y;

  const str = (wantValue: boolean): string | undefined => {
    const start = i;
    i++; // opening quote
    for (;;) {
      if (i >= n) fail('unterminated string, expected a closing "');
      const c = text.charCodeAt(i);
      if (c === 34) break;
      if (c === 92) {
        const e = text[i + 1];
        if (e === 'u') {
          if (!/^[0-9a-fA-F]{4}$/.test(text.slice(i + 2, i + 6))) {
            i++;
            fail('bad \\u escape in string, expected 4 hex digits');
          }
          i += 6;
        } else if (e !== undefined && '"\\/bfnrt'.includes(e)) i += 2;
        else {
          i++;
          fail(`bad escape \\${e ?? ''} in string, expected one of \\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX`);
        }
        continue;
      }
      if (c < 0x20) fail('raw control character (a line break?) inside a string, expected it escaped as \\n or \\t');
      i++;
    }
    i++; // closing quote
    return wantValue ? (JSON.parse(text.slice(start, i)) as string) : undefined;
  };

  const value = (path: (string | number)[], rec: boolean): void => {
    ws();
    if (i >= n) fail('unexpected end of file, expected a value');
    const c = text[i];
    const depth = path.length;
    if (c === '{') {
      i++;
      ws();
      if (text[i] === '}') {
        i++;
        return;
      }
      const seen = dupes && depth < dupes.depth ? new Set<string>() : undefined;
      for (;;) {
        ws();
        if (text[i] !== '"') fail(`unexpected ${describe()}, expected a double-quoted property name${text[i] === '}' ? ' (trailing comma?)' : ''}`);
        const keyAt = i;
        const sub = rec && depth < maxDepth;
        const key = str(sub || seen !== undefined) ?? '';
        if (sub) record!.set(pathKey([...path, key]), keyAt);
        if (seen) {
          if (seen.has(key)) dupes!.found([...path, key], keyAt);
          else seen.add(key);
        }
        ws();
        if (text[i] !== ':') fail(`unexpected ${describe()}, expected ':' after property name`);
        i++;
        value(sub || seen ? [...path, key] : path, sub);
        ws();
        if (text[i] === ',') {
          i++;
          continue;
        }
        if (text[i] === '}') {
          i++;
          return;
        }
        fail(`unexpected ${describe()}, expected ',' or '}' after a property value`);
      }
    }
    if (c === '[') {
      i++;
      ws();
      if (text[i] === ']') {
        i++;
        return;
      }
      for (let k = 0; ; k++) {
        ws();
        if (depth === 0) top = k;
        let sub = rec && depth < maxDepth;
        if (depth === 0 && wanted && !wanted.has(k)) sub = false;
        if (sub) record!.set(pathKey([...path, k]), i);
        if (text[i] === ']') fail(`unexpected ${describe()}, expected a value (trailing comma?)`);
        value(sub || (dupes && depth < dupes.depth) ? [...path, k] : path, sub);
        ws();
        if (text[i] === ',') {
          i++;
          continue;
        }
        if (text[i] === ']') {
          i++;
          if (depth === 0) top = undefined;
          return;
        }
        fail(`unexpected ${describe()}, expected ',' or ']' after an array element`);
      }
    }
    if (c === '"') {
      str(false);
      return;
    }
    if (c === '-' || (c !== undefined && c >= '0' && c <= '9')) {
      numRe.lastIndex = i;
      const m = numRe.exec(text);
      if (!m) fail(`bad number, expected digits`);
      i += m![0].length;
      return;
    }
    for (const lit of ['true', 'false', 'null']) {
      if (text.startsWith(lit, i)) {
        i += lit.length;
        return;
      }
    }
    fail(`unexpected ${describe()}, expected a value (string, number, object, array, true, false or null)`);
  };

  value([], record !== undefined);
  ws();
  if (i < n) fail(`unexpected ${describe()} after the end of the JSON value, expected end of file`);
}
