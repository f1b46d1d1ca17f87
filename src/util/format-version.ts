/**
 * The compatibility promise for what teams commit (docs/compatibility.md): every file format rankgate writes for a
 * team to keep carries a format version, and a rankgate reads every older version of it or refuses the file in one line
 * naming the command that migrates it; a version newer than it knows is refused in one line naming the upgrade.
 */
import { UserError } from '../errors.ts';
import { RANKGATE_VERSION } from '../version.ts';

export interface FormatSpec {
  /** What the file is, for people: "gate floors", "baseline", "judgments file". */
  what: string;
  /** The field holding the version (e.g. `version`, `rankgate_baseline`). */
  field: string;
  /** The version this rankgate writes (the newest it reads). */
  current: number;
  /** Older versions this rankgate still reads as they are. */
  reads?: readonly number[];
  /** Older versions it refuses, with the command that migrates each (e.g. "rankgate gate RESULTS --update-baseline"). */
  migrate?: Readonly<Record<number, string>>;
  /** The version a file without the field is (files written before the field existed); undefined: the field is required. */
  absentIs?: number;
}

/** The version of `value` under `spec`, checked; a UserError naming the file, the field and what to do otherwise. */
export function checkFormatVersion(file: string, value: unknown, spec: FormatSpec): number {
  if (value === undefined && spec.absentIs !== undefined) return spec.absentIs;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1)
    throw new UserError(`${file}: field '${spec.field}': expected the ${spec.what} format version (a whole number, ${spec.current} for this rankgate), got ${JSON.stringify(value)}`);
  if (value === spec.current || spec.reads?.includes(value)) return value;
  if (value > spec.current)
    throw new UserError(`${file}: field '${spec.field}': ${spec.what} format version ${value} was written by a newer rankgate; rankgate ${RANKGATE_VERSION} reads up to version ${spec.current}: upgrade rankgate (npm i -D rankgate@latest)`);
  const how = spec.migrate?.[value];
  throw new UserError(`${file}: field '${spec.field}': ${spec.what} format version ${value} is no longer read by rankgate ${RANKGATE_VERSION}${how ? `: migrate it with \`${how}\`` : ''}`);
}
