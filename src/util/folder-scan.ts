/**
 * The one walk of a folder of input files, shared by the corpus reader (src/ingest/readers.ts) and the golden-set
 * commands (`rankgate golden validate DIR`, `golden stats DIR`): what it leaves out is symbolic links leading outside
 * the folder (any readable file of the machine, /etc/passwd or a linked .env, would otherwise be read and quoted),
 * links inside it unless links are followed, and special files (fifos, sockets, devices: opening a fifo blocks for
 * ever). Reported once as one warning line, counted, with the first few. A special file named directly is refused
 * (refuseSpecialFile) before anything opens it.
 */
import { lstatSync, readdirSync, realpathSync, statSync, type Stats } from 'node:fs';
import { extname, isAbsolute, join, relative, sep } from 'node:path';
import { UserError } from '../errors.ts';
import { safeTerminal } from './terminal.ts';

export interface FolderScanOptions {
  /** Follow symbolic links whose target stays inside the folder (a link leading outside is never followed). */
  followSymlinks: boolean;
  /** What the folder is, in the warning ("corpus", "golden folder"). */
  noun: string;
  /** How to follow links inside, in the warning ("without --follow-symlinks"). */
  followHint: string;
}

/** 'fifo', 'socket', 'device' or 'special file' for a stat that is neither a regular file nor a folder. */
export function specialKind(st: Stats): string {
  return st.isFIFO() ? 'fifo' : st.isSocket() ? 'socket' : st.isCharacterDevice() || st.isBlockDevice() ? 'device' : 'special file';
}

/** A path named directly must be a regular file or a folder: a fifo, socket or device is refused, never opened. */
export function refuseSpecialFile(path: string, st: Stats, what: string): void {
  if (!st.isFile() && !st.isDirectory()) {
    throw new UserError(`${safeTerminal(path)}: a ${specialKind(st)}, not ${what}`);
  }
}

export class FolderScan {
  /** The folder as resolved (symbolic links in its own path are the user's choice). */
  readonly root: string;
  readonly follow: boolean;
  private readonly skipped = { outside: new Map<string, string>(), inside: new Set<string>(), special: new Map<string, string>() };
  /** `given`: the folder as the user named it (file names keep that form). */
  constructor(
    readonly given: string,
    private readonly opts: FolderScanOptions,
  ) {
    this.root = realpathSync(given);
    this.follow = opts.followSymlinks;
  }

  private inside(real: string): boolean {
    const rel = relative(this.root, real);
    return rel === '' || (!rel.startsWith(`..${sep}`) && rel !== '..' && !isAbsolute(rel));
  }

  /** The entry's stats when the walk may use it (a folder or a regular file inside the folder), else undefined. */
  admit(p: string): Stats | undefined {
    let st = lstatSync(p);
    if (st.isSymbolicLink()) {
      let real: string;
      try {
        real = realpathSync(p);
      } catch {
        this.skipped.outside.set(p, '(a broken link)');
        return undefined;
      }
      if (!this.inside(real)) {
        this.skipped.outside.set(p, real);
        return undefined;
      }
      if (!this.follow) {
        this.skipped.inside.add(p);
        return undefined;
      }
      st = statSync(p);
    }
    if (st.isDirectory() || st.isFile()) return st;
    this.skipped.special.set(p, specialKind(st));
    return undefined;
  }

  /**
   * Files under the folder with one of `exts`, sorted, each folder once (a link cycle ends there). `takeFolder`: a
   * folder it returns true for is listed itself instead of walked into (a BEIR or TREC golden folder).
   */
  list(exts: Set<string>, takeFolder?: (dir: string) => boolean): string[] {
    const out: string[] = [];
    const seen = new Set<string>();
    const walk = (d: string, depth: number) => {
      if (depth > 32) return;
      const real = realpathSync(d);
      if (seen.has(real)) return;
      seen.add(real);
      for (const name of readdirSync(d).sort()) {
        if (name.startsWith('.')) continue;
        const p = join(d, name);
        const st = this.admit(p);
        if (!st) continue;
        if (st.isDirectory()) {
          if (takeFolder?.(p)) out.push(p);
          else walk(p, depth + 1);
        } else if (exts.has(extname(name).toLowerCase())) out.push(p);
      }
    };
    walk(this.given, 0);
    return out;
  }

  /** One line, or undefined when nothing was skipped. */
  warning(): string | undefined {
    const { outside, inside, special } = this.skipped;
    const n = outside.size + inside.size + special.size;
    if (!n) return undefined;
    const first = <T>(xs: T[], f: (x: T) => string) => xs.slice(0, 3).map(f).join(', ') + (xs.length > 3 ? ', …' : '');
    const rel = (p: string) => relative(this.given, p) || p;
    const parts: string[] = [];
    if (outside.size) parts.push(`${outside.size} symbolic link${outside.size > 1 ? 's' : ''} leading outside the ${this.opts.noun} (${first([...outside], ([p, t]) => `${rel(p)} -> ${t}`)})`);
    if (inside.size) parts.push(`${inside.size} symbolic link${inside.size > 1 ? 's' : ''} inside it, not followed ${this.opts.followHint} (${first([...inside], rel)})`);
    if (special.size) parts.push(`${special.size} special file${special.size > 1 ? 's' : ''} (${first([...special], ([p, k]) => `${rel(p)}: ${k}`)})`);
    return safeTerminal(`warning: ${this.given}: skipped ${n} entr${n > 1 ? 'ies' : 'y'}: ${parts.join('; ')}`);
  }
}
