/**
 * parseArgs for every `rankgate` subcommand: an unknown or malformed option is one line naming it, with a
 * did-you-mean and the usage, as a UserError (exit 2, no stack trace).
 */
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { UserError } from '../errors.ts';
import { didYouMean } from '../util/suggest.ts';

type Options = NonNullable<ParseArgsConfig['options']>;

export function parseCliArgs<O extends Options>(argv: string[], options: O, usage: string, allowPositionals = true) {
  try {
    return parseArgs({ args: argv, options, allowPositionals, strict: true });
  } catch (e) {
    const err = e as Error & { code?: string };
    const flags = Object.entries(options).flatMap(([name, o]) => [`--${name}`, ...(o.short ? [`-${o.short}`] : [])]);
    const m = /Unknown option '([^']+)'/.exec(err.message);
    if (err.code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION' && m) {
      const bad = m[1]!.split('=')[0]!;
      throw new UserError(`unknown option '${bad}'${didYouMean(bad, flags)}\n${usage}`);
    }
    throw new UserError(`${err.message.split('\n')[0]}\n${usage}`);
  }
}
