import { LineCounter, parseDocument, isMap, isSeq, type Node } from 'yaml';
import type { z } from 'zod';
import { InputError } from '../errors.js';
import { readUtf8File } from './textFile.js';
import { nearest } from '../util/nearest.js';

/**
 * The yaml library's bound on alias expansion (its default, written out because the error is
 * ours to name): a few nested anchors can otherwise multiply into billions of nodes.
 */
const MAX_ALIAS_COUNT = 100;

/**
 * Parses a YAML file and validates it with a zod schema. Every problem names the file, the
 * line and the field path, e.g. `kem-90/candidate.yml:7: instances[0].lable: unknown key`.
 */
export function loadYaml<S extends z.ZodType>(file: string, schema: S, displayName = file): z.infer<S> {
  const text = readUtf8File(file, displayName);
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines, prettyErrors: false, uniqueKeys: true });
  if (doc.errors.length > 0) {
    const err = doc.errors[0]!;
    const line = lines.linePos(err.pos[0]).line;
    throw new InputError(displayName, `line ${line}`, err.message.split('\n')[0] ?? 'invalid YAML');
  }
  const result = schema.safeParse(toPlainData(doc, displayName) ?? {});
  if (result.success) return result.data;
  const problems = result.error.issues.map((issue) => {
    const keys = issue.code === 'unrecognized_keys' ? (issue as { keys: string[] }).keys : [];
    const basePath = issue.path.map((p) => (typeof p === 'symbol' ? String(p) : p));
    const path = keys.length > 0 ? [...basePath, keys[0]!] : basePath;
    const line = lineOf(doc.contents as Node | null, path, lines);
    const field = formatPath(path) || '(top level)';
    // A record key's own rule ('a system id must match …') sits inside zod's "Invalid key in record".
    const keyProblem = issue.code === 'invalid_key' ? issue.issues[0]?.message : undefined;
    const message =
      keys.length > 0
        ? `unknown key${keys.length > 1 ? 's' : ''} ${keys.map((k) => `'${k}'`).join(', ')}${suggestion(keys, knownKeysAt(schema, basePath))}`
        : (keyProblem ?? issue.message);
    return `${line ? `line ${line}: ` : ''}${field}: ${message}`;
  });
  throw new InputError(displayName, '', problems.join('; '));
}

/**
 * The line of a field (`instances[0].dir`) in a YAML file that parsed, for a problem found after
 * parsing (a folder that does not exist); undefined when the file or the field cannot be found.
 */
export function lineOfField(file: string, field: string): number | undefined {
  try {
    const lines = new LineCounter();
    const doc = parseDocument(readUtf8File(file, file), { lineCounter: lines, prettyErrors: false });
    const path = [...field.matchAll(/([^.[\]]+)|\[(\d+)\]/g)].map((m) => (m[2] !== undefined ? Number(m[2]) : m[1]!));
    return lineOf(doc.contents as Node | null, path, lines);
  } catch {
    return undefined;
  }
}

function toPlainData(doc: ReturnType<typeof parseDocument>, displayName: string): unknown {
  try {
    return doc.toJS({ maxAliasCount: MAX_ALIAS_COUNT });
  } catch (e) {
    // The library says so with a ReferenceError of its own; anything else is a bug of ours.
    if (e instanceof ReferenceError && /alias count/i.test(e.message))
      throw new InputError(
        displayName,
        '',
        `its aliases (*name) expand past the limit of ${MAX_ALIAS_COUNT}, refused as a resource exhaustion attack ("billion laughs"); write the values out instead`,
      );
    throw e;
  }
}

function formatPath(path: ReadonlyArray<string | number>): string {
  return path.reduce<string>((acc, p) => (typeof p === 'number' ? `${acc}[${p}]` : acc ? `${acc}.${p}` : p), '');
}

function lineOf(root: Node | null, path: ReadonlyArray<string | number>, lines: LineCounter): number | undefined {
  let node: Node | null | undefined = root;
  let line: number | undefined = node?.range ? lines.linePos(node.range[0]).line : undefined;
  for (const key of path) {
    if (isMap(node)) {
      const pair = node.items.find((it) => (it.key as { value?: unknown } | null)?.value === key);
      if (!pair) break;
      const keyNode = pair.key as Node;
      if (keyNode?.range) line = lines.linePos(keyNode.range[0]).line;
      node = pair.value as Node | null;
    } else if (isSeq(node) && typeof key === 'number') {
      node = node.items[key] as Node | undefined;
      if (node?.range) line = lines.linePos(node.range[0]).line;
    } else {
      break;
    }
  }
  return line;
}

/** "; did you mean 'nist_prefix'?" for the first unknown key that is near a known one. */
function suggestion(keys: readonly string[], known: readonly string[]): string {
  for (const k of keys) {
    const near = nearest(k, known);
    if (near) return `; did you mean '${near}'?`;
  }
  return '';
}

/** Zod's definition of a schema, as far as the walk below reads it. */
interface Def {
  type?: string;
  shape?: Record<string, unknown>;
  element?: unknown;
  innerType?: unknown;
  valueType?: unknown;
  in?: unknown;
}
const defOf = (schema: unknown): Def => ((schema as { _zod?: { def?: Def } } | null)?._zod?.def ?? {}) as Def;

/** The keys the object schema at `path` knows (through arrays, records, defaults and pipes); [] when unknown. */
function knownKeysAt(schema: unknown, path: ReadonlyArray<string | number>): string[] {
  let s = schema;
  const unwrap = () => {
    for (let d = defOf(s); d.innerType !== undefined || d.type === 'pipe'; d = defOf(s)) s = d.innerType ?? d.in;
  };
  for (const p of path) {
    unwrap();
    const d = defOf(s);
    if (d.type === 'object' && typeof p === 'string') s = d.shape?.[p];
    else if (d.type === 'array') s = d.element;
    else if (d.type === 'record') s = d.valueType;
    else return [];
  }
  unwrap();
  const d = defOf(s);
  return d.type === 'object' && d.shape ? Object.keys(d.shape) : [];
}
