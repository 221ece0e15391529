// A synthetic campaign shaped like NGCC Round 1 (bench/synthetic/README.md has the model and the
// sources of its figures): 119 candidates of toy submissions that spin for a chosen number of
// cycles per operation.
//   node bench/synthetic/generate.mjs DIR [--scale S] [--keep-below CYCLES] [--seed N] [--build-functions N]
//        [--trials N] [--trial-target S] [--op-budget S] [--warmups N] [--profile-target S]
//        [--profile-rounds N] [--only-categories kem,sig,kex,hash] [--per-category N]
import { cpSync, existsSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..', '..');

/** Round 1's candidates per category (the issue; ids as the real campaign spells them). */
export const ROUND1 = { kem: 41, sig: 34, kex: 9, hash: 35 };
const ID_PREFIX = { kem: 'kem', sig: 'sign', kex: 'kex', hash: 'hash' };

/** Core cycles of one spin iteration: a dependent imul + add on x86-64 (bench/synthetic/toy/synth_toy.h). */
export const CYCLES_PER_ITERATION = 4;

/** The operations each category's record files are named by (src/measure/*Operations.ts). */
export const HASH_MESSAGE_BYTES = [32, 128, 512, 1024, 4096, 8192, 16384, 65536];
const OPS = {
  kem: ['keygen', 'enc', 'dec'],
  sig: ['keygen', 'sign', 'verify'],
  kex: ['init_a', 'init_b', 'pass1', 'pass2', 'derive_a', 'derive_b'],
};
/** The define that sets each operation's spin (the toy sources read them). */
const DEFINE_OF = {
  keygen: 'SYNTH_KEYGEN',
  enc: 'SYNTH_ENC',
  dec: 'SYNTH_DEC',
  sign: 'SYNTH_SIGN',
  verify: 'SYNTH_VERIFY',
  init_a: 'SYNTH_INIT_A',
  init_b: 'SYNTH_INIT_B',
  pass1: 'SYNTH_PASS1',
  pass2: 'SYNTH_PASS2',
  derive_a: 'SYNTH_DERIVE_A',
  derive_b: 'SYNTH_DERIVE_B',
};

/**
 * Cost classes of a public-key candidate: its first instance's reference operation cost (log-uniform
 * in `base`), the factor from one instance to the next (uniform in `growth`), and how many of the 84
 * public-key candidates are in the class (the rest are `fast`). README.md names the real figures.
 */
export const COST_CLASSES = {
  fast: { base: [2e5, 7e5], growth: [1.5, 3.2] },
  medium: { base: [1.5e6, 7e6], growth: [1.0, 2.6] },
  slow: { base: [1.5e7, 6e7], growth: [3, 8], count: 8 },
  extreme: { base: [5e9, 6e10], growth: [2.5, 4], count: 2 },
};
const MEDIUM_COUNT = 18;

/** Operation costs relative to the reference cost, per category and profile (README.md). */
const PROFILES = {
  kem: {
    lattice: { keygen: [1, 1], enc: [1.0, 1.4], dec: [1.0, 1.5] },
    // QCTM: a huge keygen, a cheap enc, a dec a tenth to a quarter of keygen.
    keygenHeavy: { keygen: [1, 1], enc: [2e-4, 2e-3], dec: [0.1, 0.25] },
  },
  sig: {
    // Facto-DSA: keygen dominates, sign and verify a tenth to a third of it.
    keygenHeavy: { keygen: [1, 1], sign: [0.06, 0.31], verify: [0.06, 0.15] },
    // Assumed (no seed page): sign dearer than keygen, verify cheaper, as in lattice signatures.
    signHeavy: { keygen: [1, 1], sign: [1.5, 4], verify: [0.3, 1] },
  },
  kex: {
    // ADKEX: init_a almost free, derive_b a copy, the passes and derive_a the work.
    steps: {
      init_a: [1e-4, 3e-4],
      init_b: [0.12, 0.15],
      pass1: [0.28, 0.3],
      pass2: [0.35, 0.37],
      derive_a: [0.2, 0.22],
      derive_b: [8e-4, 2.2e-3],
    },
  },
};

/** Instances per candidate, 1–4 (README.md: the seed and golden pages have 2, 3 and 4). */
const INSTANCE_WEIGHTS = { pk: [0.1, 0.15, 0.45, 0.3], hash: [0.35, 0.45, 0.15, 0.05] };

/** mulberry32: a small seeded generator, so that one seed gives one campaign on every machine. */
function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const uniform = (r, [lo, hi]) => lo + (hi - lo) * r();
const logUniform = (r, [lo, hi]) => Math.exp(Math.log(lo) + (Math.log(hi) - Math.log(lo)) * r());
const weighted = (r, weights) => {
  let x = r() * weights.reduce((a, b) => a + b, 0);
  for (let i = 0; i < weights.length; i++) {
    x -= weights[i];
    if (x < 0) return i;
  }
  return weights.length - 1;
};
function shuffle(r, xs) {
  const out = [...xs];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(r() * (i + 1));
    [out[i], out[j]] = [out[j], out[i]];
  }
  return out;
}

/**
 * The campaign's model, without writing anything: every candidate, its instances and each
 * operation's modelled cycles at full scale, keyed as the records name operations (a hash's are
 * `hash_<bytes>`, costing base + rate × bytes).
 */
export function model({ seed = 1 } = {}) {
  const r = rng(seed);
  const pk = [];
  for (const type of ['kem', 'sig', 'kex']) for (let i = 1; i <= ROUND1[type]; i++) pk.push({ type, n: i });
  const order = shuffle(
    r,
    pk.map((_, i) => i),
  );
  const classOf = new Array(pk.length).fill('fast');
  let at = 0;
  for (const [name, count] of [
    ['extreme', COST_CLASSES.extreme.count],
    ['slow', COST_CLASSES.slow.count],
    ['medium', MEDIUM_COUNT],
  ])
    for (let k = 0; k < count; k++) classOf[order[at++]] = name;
  const candidates = pk.map(({ type, n }, i) => pkCandidate(r, type, n, classOf[i]));
  for (let n = 1; n <= ROUND1.hash; n++) candidates.push(hashCandidate(r, n));
  return candidates;
}

const idOf = (type, n) => `${ID_PREFIX[type]}-${String(n).padStart(2, '0')}`;

function pkCandidate(r, type, n, cls) {
  const c = COST_CLASSES[cls];
  const profiles = Object.keys(PROFILES[type]);
  // The extreme class has QCTM's and Facto-DSA-512's shape (keygen-heavy), a slow signature
  // Facto-DSA-256's; slow KEMs, and the rest, take either profile of their category.
  const heavy = cls === 'extreme' || (cls === 'slow' && type === 'sig');
  const profile =
    heavy && profiles.includes('keygenHeavy') ? 'keygenHeavy' : type === 'kem' ? 'lattice' : profiles[Math.floor(r() * profiles.length)];
  const ratios = Object.fromEntries(OPS[type].map((op) => [op, uniform(r, PROFILES[type][profile][op])]));
  const count = 1 + weighted(r, INSTANCE_WEIGHTS.pk);
  let reference = logUniform(r, c.base);
  const instances = [];
  for (let k = 0; k < count; k++) {
    if (k > 0) reference *= uniform(r, c.growth);
    // Each operation of an instance varies a little around its profile (±10 %).
    const ops = Object.fromEntries(OPS[type].map((op) => [op, Math.round(reference * ratios[op] * uniform(r, [0.9, 1.1]))]));
    instances.push({ label: `L${k + 1}`, ops });
  }
  return { id: idOf(type, n), type, class: cls, profile, instances };
}

function hashCandidate(r, n) {
  const count = 1 + weighted(r, INSTANCE_WEIGHTS.hash);
  // CHIME: 30–45 cycles/byte on long messages; the spread around it is assumed (README.md).
  let rate = logUniform(r, [8, 120]);
  const instances = [];
  for (let k = 0; k < count; k++) {
    if (k > 0) rate *= uniform(r, [1.1, 1.6]);
    // A fixed cost of 15–40 bytes' worth: CHIME-512's 32-byte call costs 1690, 23 bytes over its rate.
    const base = Math.round(rate * uniform(r, [15, 40]));
    const ops = Object.fromEntries(HASH_MESSAGE_BYTES.map((b) => [`hash_${b}`, Math.round(base + rate * b)]));
    instances.push({ label: `H${k + 1}`, ops, hash: { base_cycles: base, cycles_per_byte: rate } });
  }
  return { id: idOf('hash', n), type: 'hash', class: 'hash', profile: 'per-byte', instances };
}

/**
 * What a modelled cost is divided by: `scale`, except that a cost up to `keepBelow` cycles keeps its
 * modelled size (the fast operations then measure what real fast code does: a spin of 10^5 cycles,
 * not the toy's own few thousand) and a larger one is not shrunk below `keepBelow`, so the order of
 * the costs holds.
 */
export const divisorOf = (cycles, scale, keepBelow = 0) =>
  keepBelow <= 0 ? scale : cycles <= keepBelow ? 1 : Math.max(1, Math.min(scale, cycles / keepBelow));

/** Spin iterations for `cycles` divided by `divisor` (never negative; the toy's own work is extra). */
const iterations = (cycles, divisor, cpi) => Math.max(0, Math.round(cycles / divisor / cpi));

/** An instance's operations at the size the toy spins them: {op: cycles}. */
function scaledOps(c, inst, scale, keepBelow) {
  // A hash's cost is linear in its message: one divisor for the instance, from its largest message.
  const hashDivisor = c.type === 'hash' ? divisorOf(Math.max(...Object.values(inst.ops)), scale, keepBelow) : undefined;
  return Object.fromEntries(
    Object.entries(inst.ops).map(([op, cycles]) => [op, Math.round(cycles / (hashDivisor ?? divisorOf(cycles, scale, keepBelow)))]),
  );
}

function definesOf(c, inst, scale, keepBelow, cpi) {
  if (c.type === 'hash') {
    const d = divisorOf(Math.max(...Object.values(inst.ops)), scale, keepBelow);
    return {
      SYNTH_HASH_BASE: iterations(inst.hash.base_cycles, d, cpi),
      SYNTH_HASH_PER_KIB: iterations(inst.hash.cycles_per_byte * 1024, d, cpi),
    };
  }
  return Object.fromEntries(
    Object.entries(inst.ops).map(([op, cycles]) => [DEFINE_OF[op], iterations(cycles, divisorOf(cycles, scale, keepBelow), cpi)]),
  );
}

const TOY_FILES = {
  kem: ['toy_kem.c', 'KEM_AlgorithmInstance.h'],
  sig: ['toy_sig.c', 'SIG_AlgorithmInstance.h'],
  kex: ['toy_kex.c', 'KEX_AlgorithmInstance.h'],
  hash: ['toy_hash.c', 'CryptHash_AlgorithmInstance.h'],
};
const ICCS_FILES = ['auxfunc.c', 'auxfunc.h', 'drng.c', 'drng.h', 'sm3_internal.h'];

/** An odd 32-bit constant for filler function i (unsigned: C reads it as written). */
const oddConstant = (i) => (((i * 2654435761) % 4294967291) | 1) >>> 0;

/** `n` generated functions (a chain, so none is dead code): a compile that costs like real sources. */
function fillerSource(id, n) {
  const name = id.replace(/-/g, '_');
  const lines = [`/* ${id}: generated filler, so that the build costs compile time. */`, '#include <stdint.h>', ''];
  for (let i = 0; i < n; i++) {
    const prev = i === 0 ? 'x' : `${name}_f${i - 1}(x ^ ${i}u)`;
    lines.push(`uint64_t ${name}_f${i}(uint64_t x);`);
    lines.push(
      `uint64_t ${name}_f${i}(uint64_t x) {\n    uint64_t a = ${prev}, b = x * ${2 * i + 3}u;\n    int k;\n    for (k = 0; k < ${(i % 7) + 3}; k++) { a = (a << 7 | a >> 57) + b; b ^= a * ${oddConstant(i)}u; }\n    return a ^ b;\n}`,
    );
  }
  lines.push(`int ${name}_filler_count(void);`, `int ${name}_filler_count(void) { return ${n}; }`, '');
  return lines.join('\n');
}

const yamlDefines = (d) =>
  `{${Object.entries(d)
    .map(([k, v]) => `${k}: ${v}`)
    .join(', ')}}`;

/**
 * Writes the campaign under `dir` (replacing what a previous generate wrote there) and returns its
 * model with the scaled spins: `synthetic.json` at the root holds the same, for the bench.
 */
export function generate(dir, opts = {}) {
  const {
    scale = 1,
    keepBelow = 0,
    seed = 1,
    buildFunctions = 0,
    cyclesPerIteration = CYCLES_PER_ITERATION,
    perCategory,
    planning = {},
    profile = {},
  } = opts;
  if (!(scale > 0)) throw new Error(`scale must be a positive number, not ${scale}`);
  if (!(keepBelow >= 0)) throw new Error(`keep-below must be a number of cycles, not ${keepBelow}`);
  let candidates = model({ seed });
  // A small campaign (tests, quick looks): the first N candidates of each category.
  if (perCategory !== undefined) {
    const taken = { kem: 0, sig: 0, kex: 0, hash: 0 };
    candidates = candidates.filter((c) => taken[c.type]++ < perCategory);
  }
  const out = resolve(dir);
  if (existsSync(out)) for (const name of readdirSync(out)) rmSync(join(out, name), { recursive: true, force: true });
  const common = join(out, 'common');
  mkdirSync(join(common, 'iccs'), { recursive: true });
  for (const f of ICCS_FILES) cpSync(join(root, 'native', 'iccs', f), join(common, 'iccs', f));
  cpSync(join(here, 'toy', 'synth_toy.h'), join(common, 'synth_toy.h'));
  for (const [, files] of Object.entries(TOY_FILES)) for (const f of files) cpSync(join(here, 'toy', f), join(common, f));
  const written = [];
  for (const c of candidates) {
    const folder = join(out, c.id);
    mkdirSync(join(folder, 'src'), { recursive: true });
    writeFileSync(join(folder, 'src', 'filler.c'), fillerSource(c.id, buildFunctions));
    const instances = c.instances.map((inst) => ({
      ...inst,
      scaled_ops: scaledOps(c, inst, scale, keepBelow),
      defines: definesOf(c, inst, scale, keepBelow, cyclesPerIteration),
    }));
    const yml = [
      `# Generated by bench/synthetic/generate.mjs (seed ${seed}, scale ${scale}, class ${c.class}): a toy that spins, NOT a real submission.`,
      `id: ${c.id}`,
      `type: ${c.type}`,
      `algorithm: Synthetic ${c.type} (${c.class}, ${c.profile})`,
      'api: iccs',
      'instances:',
      ...instances.flatMap((inst) => [
        `  - label: ${inst.label}`,
        '    dir: src',
        `    extra_sources: [../../common/${TOY_FILES[c.type][0]}, ../../common/iccs/auxfunc.c, ../../common/iccs/drng.c]`,
        '    include: [../../common, ../../common/iccs]',
        `    defines: ${yamlDefines(inst.defines)}`,
      ]),
      '',
    ];
    writeFileSync(join(folder, 'candidate.yml'), yml.join('\n'));
    written.push({ ...c, instances });
  }
  const plan = { trials: 5, trial_target_s: 1, op_budget_s: 60, warmups: 3, ...planning };
  const prof = { target_s: 0.2, rounds: 5, ...profile };
  const settings = [
    `# Generated by bench/synthetic/generate.mjs (seed ${seed}, scale ${scale}): the fixed plan unless the bench says otherwise.`,
    'planning:',
    // A nested block (planning.adaptive) is written as one.
    ...Object.entries(plan).flatMap(([k, v]) =>
      typeof v === 'object' ? [`  ${k}:`, ...Object.entries(v).map(([kk, vv]) => `    ${kk}: ${vv}`)] : [`  ${k}: ${v}`],
    ),
    'profile:',
    ...Object.entries(prof).map(([k, v]) => `  ${k}: ${v}`),
    '',
  ];
  writeFileSync(join(out, 'ngcc-perf.yml'), settings.join('\n'));
  const result = {
    seed,
    scale,
    keep_below: keepBelow,
    cycles_per_iteration: cyclesPerIteration,
    build_functions: buildFunctions,
    candidates: written,
  };
  writeFileSync(join(out, 'synthetic.json'), `${JSON.stringify(result, null, 1)}\n`);
  return result;
}

/** Every operation of a model as rows {id, type, class, label, op, cycles} (cycles at full scale). */
export function operationRows(candidates) {
  return candidates.flatMap((c) =>
    c.instances.flatMap((inst) =>
      Object.entries(inst.ops).map(([op, cycles]) => ({ id: c.id, type: c.type, class: c.class, label: inst.label, op, cycles })),
    ),
  );
}

const FLAGS = {
  '--scale': ['scale', Number],
  '--keep-below': ['keepBelow', Number],
  '--seed': ['seed', Number],
  '--build-functions': ['buildFunctions', Number],
  '--cycles-per-iteration': ['cyclesPerIteration', Number],
  '--per-category': ['perCategory', Number],
};
const PLANNING_FLAGS = { '--trials': 'trials', '--trial-target': 'trial_target_s', '--op-budget': 'op_budget_s', '--warmups': 'warmups' };
const PROFILE_FLAGS = { '--profile-target': 'target_s', '--profile-rounds': 'rounds' };

/** The CLI's options, as generate() takes them. */
export function parseArgs(argv) {
  const opts = { planning: {}, profile: {} };
  let dir;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const value = () => {
      const v = Number(argv[++i]);
      if (!Number.isFinite(v)) throw new Error(`${a} takes a number`);
      return v;
    };
    if (FLAGS[a]) opts[FLAGS[a][0]] = value();
    else if (PLANNING_FLAGS[a]) opts.planning[PLANNING_FLAGS[a]] = value();
    else if (PROFILE_FLAGS[a]) opts.profile[PROFILE_FLAGS[a]] = value();
    else if (!a.startsWith('-') && dir === undefined) dir = a;
    else throw new Error(`unknown option ${a}`);
  }
  if (!dir)
    throw new Error(
      'usage: node bench/synthetic/generate.mjs DIR [--scale S] [--keep-below CYCLES] [--seed N] [--build-functions N] [--per-category N] [--trials N] [--trial-target S] [--op-budget S] [--warmups N] [--profile-target S] [--profile-rounds N]',
    );
  return { dir, opts };
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  try {
    const { dir, opts } = parseArgs(process.argv.slice(2));
    const g = generate(dir, opts);
    const rows = operationRows(g.candidates);
    console.log(
      `${dir}: ${g.candidates.length} candidates, ${g.candidates.reduce((n, c) => n + c.instances.length, 0)} instances, ${rows.length} operations (seed ${g.seed}, scale ${g.scale})`,
    );
  } catch (e) {
    console.error(e.message);
    process.exit(2);
  }
}
