import { appendFileSync, cpSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type BuildRequest, buildArgv, flagsFor } from '../src/compile/compile.js';
import { systemCompiler } from '../src/env/toolchain.js';
import { loadCandidate } from '../src/config/campaign.js';
import { buildRequestFor } from './helpers/build.js';
import { PQCLEAN, schemeInfo } from './helpers/pqclean.js';
import { tempDir, testData } from './helpers/tmp.js';

// Under api: nist the harness links its own KAT generator as randombytes. Which of a submission's
// files is its own generator is judged by the symbols the compiler reports, never by a file's name:
// real code nobody here wrote (PQClean's Falcon and common/, pq-crystals Kyber ref/) shows both sides.
// The four Falcon variants building and passing their digests: test/kat-pqclean.test.ts.

const KYBER_REF = join(testData, 'pq-crystals-kyber', 'ref');
const KYBER_NAMES = [
  '    nist_names:',
  '      keypair: pqcrystals_kyber512_ref_keypair',
  '      enc: pqcrystals_kyber512_ref_enc',
  '      dec: pqcrystals_kyber512_ref_dec',
  '      pk_bytes: pqcrystals_kyber512_PUBLICKEYBYTES',
  '      sk_bytes: pqcrystals_kyber512_SECRETKEYBYTES',
  '      ct_bytes: pqcrystals_kyber512_CIPHERTEXTBYTES',
  '      ss_bytes: pqcrystals_kyber512_BYTES',
];

/** A candidate folder with one api: nist instance; `lines` are the instance's fields after label. */
function candidate(type: 'kem' | 'sig', lines: string[]): string {
  const folder = join(tempDir(), type === 'kem' ? 'kem-1' : 'sign-1');
  mkdirSync(folder, { recursive: true });
  writeFileSync(
    join(folder, 'candidate.yml'),
    `id: ${type === 'kem' ? 'kem-1' : 'sign-1'}\ntype: ${type}\nalgorithm: test\napi: nist\ninstances:\n  - label: x\n${lines.join('\n')}\n`,
  );
  return folder;
}

/** The build's verdicts and own sources (file names), without building. */
async function planned(folder: string, more: Partial<BuildRequest> = {}) {
  const c = loadCandidate(folder, 'candidate.yml');
  const req = buildRequestFor(c, 0, more);
  const built = await buildArgv(req, flagsFor(req), join(req.outDir, 'guide', 'libx.so'));
  const names = built.sources.filter((f) => !f.includes('/native/linked/nist/')).map((f) => f.split('/').pop()!);
  return { names, notes: built.notes };
}

/** Kyber ref/ copied, its randombytes.c renamed; `extra` C is appended to that file. */
function kyberWithGenerator(name: string, extra = ''): string {
  const dir = join(tempDir(), 'ref');
  cpSync(KYBER_REF, dir, { recursive: true });
  renameSync(join(dir, 'randombytes.c'), join(dir, name));
  if (extra) appendFileSync(join(dir, name), extra);
  return dir;
}

const kyberLines = (dir: string, more: string[] = []) => [`    dir: ${dir}`, '    defines: [KYBER_K=2]', ...KYBER_NAMES, ...more];

describe('which sources are the submission’s own generator: by the symbols they define', () => {
  // The guide's performance and resource flags pass -flto: clang then writes LLVM bitcode, in which
  // GNU nm sees no symbol. The generator must be found whatever the objects are.
  it.each(['gcc', 'clang', 'clang-16'])(
    'finds Kyber ref’s randombytes.c by its symbols under %s with -flto (the performance flags)',
    async (compiler) => {
      if (!systemCompiler(compiler)) return void console.log(`skipped: ${compiler} is not installed (.ci/run installs clang and clang-16)`);
      const dir = kyberWithGenerator('randombytes.c');
      const { names, notes } = await planned(candidate('kem', kyberLines(dir)), { compiler, variant: 'performance' });
      expect(names).not.toContain('randombytes.c');
      expect(notes).toEqual(["# left out randombytes.c: it defines randombytes, which the harness's KAT generator provides"]);
    },
  );

  it("keeps Falcon's rng.c, its internal PRNG (prng_init, prng_refill)", async () => {
    const info = schemeInfo('falcon-512');
    const folder = candidate('sig', [
      `    dir: ${info.dir}`,
      `    include: [${join(PQCLEAN, 'common')}]`,
      `    nist_prefix: ${info.prefix}`,
    ]);
    const { names, notes } = await planned(folder);
    expect(names).toContain('rng.c');
    expect(notes).toEqual([]);
  });

  it("leaves out PQClean's common/randombytes.c when an instance lists it (it defines PQCLEAN_randombytes)", async () => {
    const info = schemeInfo('ml-kem-512');
    const common = join(PQCLEAN, 'common');
    const folder = candidate('kem', [
      `    dir: ${info.dir}`,
      `    extra_sources: [${join(common, 'fips202.c')}, ${join(common, 'randombytes.c')}]`,
      `    include: [${common}]`,
      `    nist_prefix: ${info.prefix}`,
    ]);
    const { names, notes } = await planned(folder);
    expect(names).toContain('fips202.c');
    expect(names).not.toContain('randombytes.c');
    expect(notes).toHaveLength(1);
    expect(notes[0]).toMatch(/^# left out .*randombytes\.c: it defines PQCLEAN_randombytes, which the harness's KAT generator provides$/);
  });

  it.each(['rng.c', 'entropy.c'])('leaves out a file named %s that defines randombytes (the name plays no part)', async (name) => {
    const { names, notes } = await planned(candidate('kem', kyberLines(kyberWithGenerator(name))));
    expect(names).not.toContain(name);
    expect(names).toContain('kem.c');
    expect(notes).toEqual([`# left out ${name}: it defines randombytes, which the harness's KAT generator provides`]);
  });

  it('keeps a generator file that also defines what the rest uses, and says why the link will clash', async () => {
    const dir = kyberWithGenerator('entropy.c', '\nint seed_helper(int x) { return x + 1; }\n');
    writeFileSync(join(dir, 'user.c'), 'int seed_helper(int x);\nint use_helper(void) { return seed_helper(41); }\n');
    const { names, notes } = await planned(candidate('kem', kyberLines(dir)));
    expect(names).toContain('entropy.c');
    expect(notes).toHaveLength(1);
    expect(notes[0]).toMatch(
      /^# kept entropy\.c: it defines randombytes, .* but also seed_helper, which user\.c use: kept, .*own_generator$/,
    );
  });

  it('leaves out a generator file whose other symbols nothing uses', async () => {
    const dir = kyberWithGenerator('entropy.c', '\nint seed_helper(int x) { return x + 1; }\n');
    const { names, notes } = await planned(candidate('kem', kyberLines(dir)));
    expect(names).not.toContain('entropy.c');
    expect(notes).toEqual([
      "# left out entropy.c: it defines randombytes, which the harness's KAT generator provides, and seed_helper, which nothing else uses",
    ]);
  });

  it('keeps its verdicts beside the library: an unchanged instance is not compiled to be judged again, a changed one is', async () => {
    const dir = kyberWithGenerator('rng.c');
    const folder = candidate('kem', kyberLines(dir));
    const c = loadCandidate(folder, 'candidate.yml');
    const req = buildRequestFor(c, 0);
    const library = join(req.outDir, 'guide', 'libx.so');
    const first = await buildArgv(req, flagsFor(req), library);
    expect(first.notes).toEqual(["# left out rng.c: it defines randombytes, which the harness's KAT generator provides"]);
    // The kept verdicts are what a second call returns: edited, the edit comes back.
    const cache = join(req.outDir, 'guide', 'own-generator.json');
    const kept = JSON.parse(readFileSync(cache, 'utf8')) as { key: string; verdicts: { why: string }[] };
    kept.verdicts[0]!.why = 'from the kept verdicts';
    writeFileSync(cache, JSON.stringify(kept));
    expect((await buildArgv(req, flagsFor(req), library)).notes).toEqual(['# left out rng.c: from the kept verdicts']);
    // A source that changes is judged again.
    appendFileSync(join(dir, 'kem.c'), '\n/* changed */\n');
    expect((await buildArgv(req, flagsFor(req), library)).notes).toEqual(first.notes);
  });

  it('own_generator decides when given: [] keeps every file, a list leaves out exactly those', async () => {
    const dir = kyberWithGenerator('rng.c');
    const kept = await planned(candidate('kem', kyberLines(dir, ['    own_generator: []'])));
    expect(kept.names).toContain('rng.c');
    expect(kept.notes).toEqual([]);
    const info = schemeInfo('falcon-512');
    const named = await planned(
      candidate('sig', [
        `    dir: ${info.dir}`,
        `    include: [${join(PQCLEAN, 'common')}]`,
        `    nist_prefix: ${info.prefix}`,
        '    own_generator: [rng.c]',
      ]),
    );
    expect(named.names).not.toContain('rng.c');
    expect(named.notes).toEqual(['# left out rng.c: candidate.yml names it in own_generator']);
  });

  it('own_generator that names no source of the instance, or under api: iccs, is refused naming the field', async () => {
    const dir = kyberWithGenerator('rng.c');
    const folder = candidate('kem', kyberLines(dir, ['    own_generator: [nope.c]']));
    const c = loadCandidate(folder, 'kem-1/candidate.yml');
    await expect(planned(folder)).rejects.toThrow(/instances\[0\]\.own_generator\[0\].*'nope\.c' is not one of the instance's sources/);
    expect(c.instances[0]!.own_generator).toEqual(['nope.c']);
    const iccs = join(tempDir(), 'kem-2');
    mkdirSync(iccs);
    writeFileSync(
      join(iccs, 'candidate.yml'),
      `id: kem-2\ntype: kem\nalgorithm: t\ninstances:\n  - { label: x, dir: ${dir}, own_generator: [rng.c] }\n`,
    );
    expect(() => loadCandidate(iccs, 'kem-2/candidate.yml')).toThrow(
      /instances\.0\.own_generator.*only allowed with api: nist|own_generator: only allowed with api: nist/,
    );
  });
});
