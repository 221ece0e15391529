import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { runCampaign } from '../src/campaign/runCampaign.js';
import { pqcleanSchemes, writePqcleanCampaign } from '../src/catalogs/pqclean.js';
import type { CtCoverage, CtEvidence } from '../src/ct/findingKinds.js';
import { evidencePaths } from '../src/evidence/layout.js';
import { validateDataset } from '../src/evidence/validate.js';
import { PQCLEAN } from './helpers/pqclean.js';
import { repoRoot, tempDir } from './helpers/tmp.js';

/**
 * PQClean's clean ML-KEM-512 (the example campaign's kem-80 instance) through the ct phase. What it
 * reports is written up in docs/method.md#what-it-reports-for-the-example-campaign: memcheck flags
 * only rej_uniform, the rejection sampling of the public matrix A, which liboqs suppresses too; the
 * example's ct-suppressions.yml explains it, after which every operation is clean.
 */
/** The line of ML-KEM-512's PQClean source file that holds `text`, read from the package. */
const lineOf = (file: string, text: string): number =>
  readFileSync(join(PQCLEAN, 'crypto_kem', 'ml-kem-512', 'clean', file), 'utf8')
    .split('\n')
    .findIndex((l) => l.includes(text)) + 1;

/** The harness's own source files by base name, as a finding names its file: none may hold a finding. */
const HARNESS_FILES = new Set(
  readdirSync(join(repoRoot, 'native'), { recursive: true, encoding: 'utf8' })
    .filter((f) => /\.(c|h|inc)$/.test(f))
    .map((f) => basename(f)),
);
const inHarness = (ct: CtEvidence) =>
  Object.entries(ct.operations).flatMap(([op, o]) => o.findings.filter((f) => HARNESS_FILES.has(f.file)).map((f) => ({ op, ...f })));

describe('the ct phase on PQClean ML-KEM-512 (clean)', () => {
  const campaignDir = tempDir();
  const dataDir = tempDir();
  const systemDir = join(dataDir, 'ct-pqclean');
  const folder = join(campaignDir, 'kem-80');
  const read = () => JSON.parse(readFileSync(evidencePaths(systemDir).ct('kem-80', 'ml-kem-512'), 'utf8')) as CtEvidence;
  const run = () => runCampaign({ campaignDir, system: 'ct-pqclean', dataDir, phases: new Set(['build', 'ct']) });

  beforeAll(async () => {
    mkdirSync(folder, { recursive: true });
    const dir = join(PQCLEAN, 'crypto_kem', 'ml-kem-512', 'clean');
    writeFileSync(
      join(folder, 'candidate.yml'),
      [
        'id: kem-80',
        'type: kem',
        'algorithm: ML-KEM (PQClean clean)',
        'api: nist',
        'instances:',
        '  - label: ml-kem-512',
        `    dir: ${dir}`,
        `    extra_sources: [${join(PQCLEAN, 'common', 'fips202.c')}]`,
        `    include: [${join(PQCLEAN, 'common')}]`,
        '    nist_prefix: PQCLEAN_MLKEM512_CLEAN_',
        '',
      ].join('\n'),
    );
    writeFileSync(join(folder, 'kat.sha256'), '# not KAT-checked here\n');
    // The measured build alone: the other builds are test/ct-builds.test.ts's subject.
    writeFileSync(join(campaignDir, 'ngcc-perf.yml'), 'ct:\n  variants: []\n');
    await run();
  });

  it('completes every operation; what it flags is the rejection sampling of the public matrix, in keygen and in dec', () => {
    const ct = read();
    expect(Object.keys(ct.operations)).toEqual(['keygen', 'enc', 'dec']);
    // Every operation makes the calls its paths need (docs/method.md#rare-paths); keygen's matrix
    // sampler squeezes more of its XOF once in a while (gen_matrix's refill loop), first after three calls.
    for (const [op, o] of Object.entries(ct.operations)) {
      const c = o.coverage as CtCoverage;
      expect(c.paths, op).toMatchObject({ asked: 64, calls: 64 });
      expect(o.calls, op).toBe(c.paths!.needed);
      expect(c.paths!.beyond, op).toBeUndefined();
    }
    expect(ct.operations.keygen!.calls).toBeGreaterThan(3);
    const loop = lineOf('indcpa.c', 'while (ctr < KYBER_N) {');
    const refill = (op: string) =>
      ((ct.operations[op]!.coverage as CtCoverage).untaken ?? []).filter((u) =>
        u.startsWith('indcpa.c:PQCLEAN_MLKEM512_CLEAN_gen_matrix:'),
      );
    expect(refill('keygen').join()).not.toContain(`:${loop + 1}-`);
    // enc and dec sample the matrix of the one public key they are given: the same path every call, without the refill.
    expect(refill('enc')).toContain(`indcpa.c:PQCLEAN_MLKEM512_CLEAN_gen_matrix:${loop + 1}-${loop + 3}`);
    expect(ct.secret_generators).toEqual(expect.arrayContaining(['randombytes']));
    const flagged = Object.entries(ct.operations).flatMap(([op, o]) => o.findings.map((f) => ({ op, ...f })));
    expect(flagged.length).toBeGreaterThan(0);
    for (const f of flagged) expect(f).toMatchObject({ kind: 'branch', function: 'rej_uniform', file: 'indcpa.c', suppressed: false });
    expect(new Set(flagged.map((f) => f.op))).toEqual(new Set(['keygen', 'dec']));
    expect(ct.operations.enc!.status).toBe('clean');
    expect(HARNESS_FILES).toContain('nist_shim.c');
    expect(inHarness(ct)).toEqual([]);
  });

  it("with the example's ct-suppressions.yml every finding is suppressed with its reason, and every operation is clean", async () => {
    cpSync(join(repoRoot, 'examples', 'campaign', 'kem-80', 'ct-suppressions.yml'), join(folder, 'ct-suppressions.yml'));
    await run();
    const ct = read();
    for (const o of Object.values(ct.operations)) {
      expect(o.status).toBe('clean');
      for (const f of o.findings) expect(f.reason).toMatch(/public/);
    }
    expect(ct.operations.keygen!.findings.every((f) => f.suppressed)).toBe(true);
    expect(validateDataset(systemDir)).toEqual([]);
  });
});

/**
 * PQClean's HQC-128 through the ct phase: its decapsulation's return value comes from a secret
 * comparison, and the NIST shim used to branch on it (native/linked/nist/nist_shim.c kem_dec). No finding
 * may lie in the harness's own code (native/), whatever the scheme's own.
 */
describe('the ct phase on PQClean HQC-128 (clean)', () => {
  it("finds nothing in the harness's own code", async () => {
    const campaignDir = tempDir();
    const dataDir = tempDir();
    const schemes = pqcleanSchemes(PQCLEAN).filter((s) => s.scheme === 'hqc-128');
    expect(schemes).toHaveLength(1);
    writePqcleanCampaign(campaignDir, schemes, [], PQCLEAN);
    writeFileSync(join(campaignDir, 'ngcc-perf.yml'), 'ct:\n  calls: 1\n  path_calls: 0\n  variants: []\n');
    await runCampaign({ campaignDir, system: 's', dataDir, phases: new Set(['build', 'ct']) });
    const id = readdirSync(campaignDir).find((d) => existsSync(join(campaignDir, d, 'candidate.yml')))!;
    const ct = JSON.parse(readFileSync(evidencePaths(join(dataDir, 's')).ct(id, 'hqc-128'), 'utf8')) as CtEvidence;
    expect(Object.keys(ct.operations)).toEqual(['keygen', 'enc', 'dec']);
    for (const [op, o] of Object.entries(ct.operations)) expect(o.status, `${op}: ${o.reason ?? ''}`).toMatch(/^(clean|flagged)$/);
    expect(inHarness(ct)).toEqual([]);
    // base_mul's and single_bit_mask's branch-free selects, which gcc turns into branches: named the compiler's.
    const loops = Object.values(ct.operations).flatMap((o) =>
      o.findings.filter((f) => f.kind === 'branch' && (f.function.includes('base_mul') || f.function.includes('single_bit_mask'))),
    );
    expect(loops.length).toBeGreaterThan(0);
    for (const f of loops) expect(f.compiler_made, JSON.stringify(f)).toBe('loop-bound');
  }, 600_000);
});

/**
 * PQClean's Falcon-512: its signer checks the secret key's first byte, a public format header
 * (0x50 + logn). Marked secret with the rest of the key, that check is a finding; the catalogue's
 * candidate says `ct.public_sk_bytes: 1` for its Falcon instances, and the finding is gone.
 */
describe('the ct phase on PQClean Falcon-512 (clean)', () => {
  it("finds the header byte's check only while the whole key is secret, and nothing in the harness's own code", async () => {
    const campaignDir = tempDir();
    const schemes = pqcleanSchemes(PQCLEAN).filter((s) => s.scheme === 'falcon-512');
    writePqcleanCampaign(campaignDir, schemes, [], PQCLEAN);
    writeFileSync(join(campaignDir, 'ngcc-perf.yml'), 'ct:\n  calls: 1\n  path_calls: 0\n  variants: []\n');
    const id = readdirSync(campaignDir).find((d) => existsSync(join(campaignDir, d, 'candidate.yml')))!;
    const yml = join(campaignDir, id, 'candidate.yml');
    expect(readFileSync(yml, 'utf8')).toContain('    ct:\n      public_sk_bytes: 1\n');
    // One evidence folder for both runs: the second keeps the build and checks again, its ct setting changed.
    const dataDir = tempDir();
    const headerCheck = async () => {
      await runCampaign({ campaignDir, system: 's', dataDir, phases: new Set(['build', 'ct']) });
      const ct = JSON.parse(readFileSync(evidencePaths(join(dataDir, 's')).ct(id, 'falcon-512'), 'utf8')) as CtEvidence;
      for (const [op, o] of Object.entries(ct.operations)) expect(o.status, `${op}: ${o.reason ?? ''}`).toMatch(/^(clean|flagged)$/);
      expect(inHarness(ct)).toEqual([]);
      return { ct, found: ct.operations.sign!.findings.filter((f) => f.function === 'do_sign' && f.file === 'pqclean.c') };
    };
    const withHeader = await headerCheck();
    expect(withHeader.ct.public_sk_bytes).toBe(1);
    expect(withHeader.found).toEqual([]);
    writeFileSync(yml, readFileSync(yml, 'utf8').replace('    ct:\n      public_sk_bytes: 1\n', ''));
    const whole = await headerCheck();
    expect(whole.ct.public_sk_bytes).toBeUndefined();
    expect(whole.found).toEqual([expect.objectContaining({ kind: 'branch', function: 'do_sign', file: 'pqclean.c' })]);
  }, 600_000);
});
