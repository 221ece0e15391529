import { parseArgs, type ParseArgsConfig } from 'node:util';
import { InputError } from '../errors.js';
import { nearest } from '../util/nearest.js';

type Options = NonNullable<ParseArgsConfig['options']>;
type Config<O extends Options> = { args: string[]; options: O; allowPositionals: true; strict: true; tokens: true };
type Values<O extends Options> = ReturnType<typeof parseArgs<Config<O>>>['values'];

/** What a command takes besides its options' types, for messages that name what is wrong. */
export interface CommandShape<R extends string> {
  /** Options the command cannot do without, each with the name of its value: { base: 'DATA_DIR' }. */
  required?: { [K in R]: string };
  /** Names of the positional arguments in order; a last name ending in '...' takes one or more. */
  positionals?: readonly string[];
}

/**
 * parseArgs with the checks it leaves to us, each an input error naming the command and the
 * argument: an option given twice (parseArgs keeps the last value without a word), a missing
 * required option or positional argument, an argument too many.
 */
export function parseCommand<O extends Options, R extends keyof O & string = never>(
  command: string,
  args: string[],
  options: O,
  shape: CommandShape<R> = {},
): { values: Values<O> & { [K in R]: string }; positionals: string[] } {
  const { values, positionals, tokens } = parsed(command, args, options);
  checkRepeated(tokens, options);
  const names = shape.positionals ?? [];
  const variadic = names.length > 0 && names[names.length - 1]!.endsWith('...');
  if (!variadic && positionals.length > names.length)
    throw new InputError('command line', command, `unexpected argument '${positionals[names.length]}'`);
  const given = values as Record<string, unknown>;
  const missing = [
    ...names.slice(positionals.length).map((n) => n.replace(/\.\.\.$/, '')),
    ...Object.entries<string>(shape.required ?? {}).flatMap(([name, value]) =>
      given[name] === undefined || given[name] === '' ? [`--${name} ${value}`] : [],
    ),
  ];
  if (missing.length > 0) throw new InputError('command line', command, `missing ${listed(missing)}`);
  return { values: values as Values<O> & { [K in R]: string }, positionals };
}

/** parseArgs, with an unknown option named as such and the nearest known one suggested. */
function parsed<O extends Options>(command: string, args: string[], options: O) {
  try {
    return parseArgs<Config<O>>({ args, options, allowPositionals: true, strict: true, tokens: true });
  } catch (e) {
    const unknown = /^Unknown option '(-{1,2}[^']+)'/.exec(e instanceof Error ? e.message : '');
    if (!unknown) throw e;
    const name = unknown[1]!.replace(/^-+/, '');
    const known = Object.keys(options);
    const near = nearest(name, known);
    const hint = near
      ? `; did you mean --${near}?`
      : known.length > 0
        ? ` (${command} takes ${known.map((k) => `--${k}`).join(', ')})`
        : '';
    throw new InputError('command line', command, `unknown option '${unknown[1]}'${hint}`);
  }
}

/** Only options that take a value: a boolean flag given twice says the same thing twice. */
function checkRepeated(tokens: NonNullable<ReturnType<typeof parseArgs>['tokens']>, options: Options): void {
  const seen = new Map<string, string[]>();
  for (const t of tokens) {
    if (t.kind !== 'option' || options[t.name]?.type !== 'string' || options[t.name]?.multiple) continue;
    const values = [...(seen.get(t.name) ?? []), t.value ?? ''];
    seen.set(t.name, values);
    if (values.length > 1)
      throw new InputError(
        'command line',
        `--${t.name}`,
        `given more than once (${values.map((v) => `'${v}'`).join(', then ')}): give it once`,
      );
  }
}

const listed = (items: string[]) => (items.length === 1 ? items[0]! : `${items.slice(0, -1).join(', ')} and ${items[items.length - 1]}`);
