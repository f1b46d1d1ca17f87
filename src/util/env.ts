/**
 * The one parser of rankgate's on/off environment settings (RANKGATE_DB_READONLY, RANKGATE_ALLOW_PARTIAL,
 * RANKGATE_ACCEPT_BASELINE_MISMATCH, RANKGATE_JUDGE_REFRESH, RANKGATE_FOLLOW_SYMLINKS, RANKGATE_DEBUG).
 * On: 1, true, yes, on. Off: 0, false, no, off, or unset/empty. Case-insensitive, surrounding spaces ignored.
 * Anything else is a UserError (exit 2) naming the variable, its value and the accepted values: a typo such as
 * RANKGATE_DB_READONLY=enabled must never read as off (docs/configuration.md).
 */
import { UserError } from '../errors.ts';

export const FLAG_ON = ['1', 'true', 'yes', 'on'] as const;
export const FLAG_OFF = ['0', 'false', 'no', 'off'] as const;

/** The on/off setting `name` from `env` (default process.env); see the module comment. */
export function envFlag(name: string, env: NodeJS.ProcessEnv = process.env): boolean {
  const raw = env[name];
  const v = (raw ?? '').trim().toLowerCase();
  if (v === '') return false;
  if ((FLAG_ON as readonly string[]).includes(v)) return true;
  if ((FLAG_OFF as readonly string[]).includes(v)) return false;
  throw new UserError(`${name}=${JSON.stringify(raw).slice(0, 80)}: expected one of ${[...FLAG_ON, ...FLAG_OFF].join(', ')} (case-insensitive), or unset`);
}
