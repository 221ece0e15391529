import { readFileSync } from 'node:fs';
import type { KatRng } from '../config/campaign.js';
import type { SandboxMode, SandboxSpec } from '../sandbox/bwrap.js';
import { runProcess } from '../sandbox/runProcess.js';
import { loadSegments } from '../util/elf.js';
import { FINGERPRINTS, ICCS_DRNG, ICCS_HASH, OTHER_RANDOMNESS, RANDOMBYTES } from './constants.js';

export type SurveyVerdictName = 'ICCS-only' | 'bypass' | 'mixed' | 'instance-dependent';

export interface InstanceSurvey {
  label: string;
  verdict: Exclude<SurveyVerdictName, 'instance-dependent'>;
  /** ICCS helpers reachable from the exported API. */
  iccs_helpers: string[];
  /** Own symmetric primitives in reachable code, with where they were seen. */
  own_primitives: Array<{ primitive: string; where: string }>;
  randomness: string[];
  /** Helpers or primitives compiled in but not reachable (reported, not counted). */
  unreachable: string[];
  entry_points: string[];
}

interface Disassembly {
  /** Function or PLT stub → the symbols its instructions name (calls, jumps, data references). */
  refs: Map<string, Set<string>>;
  /** Function → immediates in its instructions. */
  immediates: Map<string, Set<bigint>>;
}

const HEADER = /^[0-9a-f]+ <([^>]+)>:$/;
const TARGET = /<([^>+@]+)(?:@plt)?(?:\+0x[0-9a-f]+)?>/g;
const IMMEDIATE = /[$#](0x[0-9a-f]+)/g;

export function parseDisassembly(text: string): Disassembly {
  const refs = new Map<string, Set<string>>();
  const immediates = new Map<string, Set<bigint>>();
  let current: string | undefined;
  for (const line of text.split('\n')) {
    const h = HEADER.exec(line);
    if (h) {
      current = h[1]!;
      refs.set(current, new Set());
      immediates.set(current, new Set());
      continue;
    }
    if (!current || !line.startsWith(' ')) continue;
    for (const m of line.matchAll(TARGET)) if (m[1] !== current) refs.get(current)!.add(m[1]!);
    for (const m of line.matchAll(IMMEDIATE)) immediates.get(current)!.add(BigInt(m[1]!));
  }
  // A PLT stub stands for the symbol it resolves to.
  for (const name of [...refs.keys()]) if (name.endsWith('@plt')) refs.set(name, new Set([name.slice(0, -4)]));
  return { refs, immediates };
}

interface SymbolInfo {
  name: string;
  address: number;
  size: number;
  type: string;
}

function parseNm(text: string): SymbolInfo[] {
  return text
    .split('\n')
    .map((l) => l.trim().split(/\s+/))
    .filter((f) => f.length === 4)
    .map(([a, s, t, n]) => ({ name: n!.replace(/@.*$/, ''), address: parseInt(a!, 16), size: parseInt(s!, 16), type: t! }));
}

function contains(hay: Uint8Array, needle: Uint8Array): boolean {
  outer: for (let i = 0; i + needle.length <= hay.length; i++) {
    for (let j = 0; j < needle.length; j++) if (hay[i + j] !== needle[j]) continue outer;
    return true;
  }
  return false;
}

/** The exported API's entry points, where reachability starts. */
export const ENTRY = /^(kem|sig|kex)_(keygen|enc|dec|sign|verify|init_a|init_b|generate_pass\d+_msg_[ab]|derive_ss_[ab])$|^CryptHash$/;
/** Leaves of the call graph: the ICCS helpers and outside randomness are not the submission's code. */
export const STOPS: ReadonlySet<string> = new Set([...ICCS_HASH, ...ICCS_DRNG, ...Object.keys(OTHER_RANDOMNESS)]);

/** false: not the NIST API; true or a `kat_rng`: the generator the harness links in as `randombytes`. */
export type NistApi = boolean | KatRng;

/** Bumped when the analysis changes, so that surveys of unchanged libraries are redone. */
export const SURVEY_VERSION = 2;

/**
 * Surveys one built library: what its exported API reaches.
 *
 * `nistApi`: the library speaks the NIST API, whose `randombytes` the harness links in (native/linked/nist:
 * NIST's AES-256-CTR DRBG, or HQC's SHAKE-256 generator under `kat_rng: hqc`): still randomness
 * outside the ICCS DRNG, but not the submitter's own.
 * `sandbox`: how objdump and nm are isolated (default bwrap). They run no submission code, but they
 * parse a file a competitor wrote, and binutils' ELF parsers have had their CVEs: they read the
 * library alone and write nothing.
 */
export async function surveyLibrary(
  library: string,
  label: string,
  nistApi: NistApi = false,
  sandbox: SandboxMode = 'bwrap',
): Promise<InstanceSurvey> {
  const spec: SandboxSpec = { mode: sandbox, readOnly: [library], writable: [] };
  const [dis, nm, dyn] = await Promise.all([
    runProcess(['objdump', '-d', '--no-show-raw-insn', library], { timeoutMs: 120_000, maxOutputBytes: 512 << 20, sandbox: spec }),
    runProcess(['nm', '-S', '--defined-only', library], { timeoutMs: 60_000, maxOutputBytes: 64 << 20, sandbox: spec }),
    runProcess(['nm', '-D', '--defined-only', library], { timeoutMs: 60_000, maxOutputBytes: 64 << 20, sandbox: spec }),
  ]);
  for (const [tool, r] of [
    ['objdump -d', dis],
    ['nm -S', nm],
    ['nm -D', dyn],
  ] as const)
    if (r.exitCode !== 0) throw new Error(`${tool} failed on ${library}: ${r.stderr.split('\n')[0]}`);
  return analyse(parseDisassembly(dis.stdout), parseNm(nm.stdout), dyn.stdout, readFileSync(library), label, nistApi);
}

function analyse(
  d: Disassembly,
  symbols: SymbolInfo[],
  dynamicText: string,
  image: Uint8Array,
  label: string,
  nistApi: NistApi = false,
): InstanceSurvey {
  const entry_points = dynamicText
    .split('\n')
    .map((l) => l.trim().split(/\s+/).pop() ?? '')
    .map((n) => n.replace(/@.*$/, ''))
    .filter((n) => ENTRY.test(n))
    .sort();
  // Breadth-first over calls and data references; the ICCS helpers and outside randomness are
  // leaves: what they do inside is theirs (the ICCS files, OpenSSL), not the submission's code.
  if (entry_points.length === 0) throw new Error('the library exports no KEM or signature entry point to start from');
  const reached = closure(entry_points, d, STOPS);
  const iccs_helpers = [...ICCS_HASH, ...ICCS_DRNG].filter((h) => reached.has(h));
  const ownDrbg = RANDOMBYTES.some((r) => reached.has(r) && !closure([r], d, STOPS).has('get_random_number'));
  const randomness = [
    ...new Set([
      ...(reached.has('get_random_number') ? ['ICCS DRNG'] : []),
      ...Object.entries(OTHER_RANDOMNESS)
        .filter(([s]) => reached.has(s))
        .map(([, v]) => v),
      ...(ownDrbg
        ? [
            nistApi
              ? `randombytes (NIST API: ${nistApi === 'hqc' ? 'the harness’s HQC SHAKE-256 generator' : 'the harness’s AES-256-CTR DRBG'})`
              : 'own DRBG (randombytes)',
          ]
        : []),
    ]),
  ].sort();

  const segments = loadSegments(image);
  const objectBytes = (s: SymbolInfo): Uint8Array | undefined => {
    const seg = segments.find((g) => s.address >= g.vaddr && s.address + s.size <= g.vaddr + g.filesz);
    return seg ? image.subarray(seg.offset + (s.address - seg.vaddr), seg.offset + (s.address - seg.vaddr) + s.size) : undefined;
  };
  const own: InstanceSurvey['own_primitives'] = [];
  const unreachable: string[] = [];
  const seen = new Set<string>();
  const helperLike = new Set([...ICCS_HASH, ...ICCS_DRNG]);
  for (const fp of FINGERPRINTS) {
    for (const s of symbols) {
      if (helperLike.has(s.name)) continue;
      const imms = d.immediates.get(s.name);
      const byImmediate = imms ? fp.immediates.filter((v) => imms.has(v)).length >= 3 : false;
      const bytes = /[rRdDbB]/.test(s.type) && s.size > 0 ? objectBytes(s) : undefined;
      const byTable = bytes ? fp.tables.some((t) => contains(bytes, t)) : false;
      if (!byImmediate && !byTable) continue;
      const key = `${fp.primitive}@${s.name}`;
      if (seen.has(key)) continue;
      seen.add(key);
      if (reached.has(s.name)) own.push({ primitive: fp.primitive, where: s.name });
      else unreachable.push(`${fp.primitive} in ${s.name}`);
    }
  }
  // init_random_number is the harness's seeding entry, never the API's: not worth a mention.
  for (const h of [...ICCS_HASH, 'get_random_number'])
    if (symbols.some((s) => s.name === h) && !reached.has(h)) unreachable.push(`ICCS ${h}`);
  // The ICCS library's own internals (SM3 inside pseudoXOF) are neither the submission's code nor news.
  const internals = closure([...ICCS_HASH, ...ICCS_DRNG], d);
  const listed = unreachable.filter((u) => !internals.has(u.split(' in ').pop()!)).sort();
  const bypassing = own.length > 0 || randomness.some((r) => r !== 'ICCS DRNG');
  const verdict = !bypassing ? 'ICCS-only' : iccs_helpers.length > 0 ? 'mixed' : 'bypass';
  return { label, verdict, iccs_helpers, own_primitives: own, randomness, unreachable: listed, entry_points };
}

/** Everything reachable from `from` over calls and references, not expanding `stops`. */
export function closure(from: string[], d: Disassembly, stops: ReadonlySet<string> = new Set()): Set<string> {
  const seen = new Set<string>();
  const queue = [...from];
  while (queue.length > 0) {
    const f = queue.shift()!;
    if (seen.has(f)) continue;
    seen.add(f);
    if (stops.has(f) && !from.includes(f)) continue;
    for (const g of d.refs.get(f) ?? []) queue.push(g);
  }
  return seen;
}

/** One verdict per candidate: the instances' verdict when they agree. */
export function candidateVerdict(instances: InstanceSurvey[]): SurveyVerdictName {
  const verdicts = new Set(instances.map((i) => i.verdict));
  return verdicts.size === 1 ? [...verdicts][0]! : 'instance-dependent';
}
