import { cpSync, readFileSync, readdirSync, statSync, writeFileSync, copyFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCampaign } from '../src/campaign/runCampaign.js';
import { allowedCpus } from '../src/env/cpus.js';
import type { BuildJson, TimingRecord } from '../src/evidence/fileTypes.js';
import { answerUnseenSeed, instanceSeed, seedId, UNSEEN_CHECK, UNSEEN_SEED_BYTES } from '../src/kat/unseen.js';
import { driverTypeOf } from '../src/campaign/context.js';
import { isNistKatRng, loadCampaign } from '../src/config/campaign.js';
import { nistEntryPrefix } from '../src/compile/nistShim.js';
import { canonicalDigest } from '../src/kat/manifest.js';
import { validateDataset } from '../src/evidence/validate.js';
import { fixtureCampaign, QUICK } from './helpers/campaigns.js';
import { repoRoot, tempDir } from './helpers/tmp.js';
import { runCli } from './helpers/cli.js';
import { KEYGEN, variant } from './helpers/toyVariant.js';
import { harnessTools } from '../src/compile/harnessTools.js';
import { measureOperations } from '../src/measure/operation.js';
import { planningSchema } from '../src/config/schemas.js';
import { clone, git, initBare } from './helpers/git.js';
import { publishedUnseenTruth } from '../src/github/baseline.js';

/**
 * Truth from outside the library (docs/method.md#unseen-seeds): a library whose KAT passes is held
 * to its pull request's base, or to an earlier night's answers on a secret seed. The fixtures
 * (test/fixtures/truth/) cheat as a competitor would, each honest wherever it can tell it is checked.
 */

const TRUTH = join(repoRoot, 'test', 'fixtures', 'truth');
const GOOD_SOURCE = join('kem-1', 'good', 'KEM_AlgorithmInstance.c');
const PHASES = new Set(['build', 'kat', 'measure'] as const);

/** The kem-1 fixture with its good instance's source replaced by a truth fixture, or slowed down (the same outputs). */
function kemCampaign(source?: 'fake_everywhere.c' | 'fake_when_timed.c' | 'slower' | 'fail_when_fake'): string {
  const dir = fixtureCampaign(['kem-1'], QUICK);
  const path = join(dir, GOOD_SOURCE);
  if (source === 'slower') writeFileSync(path, `#define TOY_KEM_SLOWDOWN 200\n${readFileSync(path, 'utf8')}`);
  else if (source === 'fail_when_fake') {
    writeFileSync(path, `#define TRUTH_FAIL_WHEN_FAKE\n${readFileSync(join(TRUTH, 'fake_everywhere.c'), 'utf8')}`);
    copyFileSync(join(TRUTH, 'fake_keygen.inc'), join(dir, 'kem-1', 'good', 'fake_keygen.inc'));
  } else if (source) {
    copyFileSync(join(TRUTH, source), path);
    copyFileSync(join(TRUTH, 'fake_keygen.inc'), join(dir, 'kem-1', 'good', 'fake_keygen.inc'));
  }
  return dir;
}

const entryOf = (data: string) => (JSON.parse(readFileSync(join(data, 'x', 'build.json'), 'utf8')) as BuildJson).instances['kem-1/good']!;
const recordOf = (data: string, op: string) =>
  JSON.parse(readFileSync(join(data, 'x', 'records', 'kem-1', `good__${op}.json`), 'utf8')) as TimingRecord;

/** Every file under `dir`, as text. */
function allText(dir: string): string {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .map((f) => join(dir, f))
    .filter((p) => statSync(p).isFile())
    .map((p) => readFileSync(p, 'latin1'))
    .join('\n');
}

async function pullRequest(head: string, base: string) {
  const [headData, baseData] = [tempDir(), tempDir()];
  await runCampaign({
    campaignDir: head,
    system: 'x',
    dataDir: headData,
    only: /^kem-1\/good$/,
    phases: PHASES,
    against: { campaignDir: base, dataDir: baseData },
  });
  return { headData, baseData };
}

describe('a pull request: a changed library under the same KAT manifest is held to its base', () => {
  it('fake everywhere passes its KAT, then is FORGED on unseen seeds and never measured', async () => {
    const { headData } = await pullRequest(kemCampaign('fake_everywhere.c'), kemCampaign());
    const e = entryOf(headData);
    expect(e.kat).toBe('PASS');
    expect(e.forged?.operation).toBe(UNSEEN_CHECK);
    expect(e.forged?.detail).toMatch(/^FORGED: its outputs on unseen seeds differ from the base's \(record 0, PK\)$/);
    expect(e.held_to).toMatchObject({ against: 'base' });
    expect(() => recordOf(headData, 'keygen')).toThrow();
  }, 300_000);

  it("an honest change agrees with its base everywhere: unseen seeds, a segment of a trial, and dec on the base's inputs", async () => {
    const { headData, baseData } = await pullRequest(kemCampaign('slower'), kemCampaign());
    const e = entryOf(headData);
    expect([e.kat, e.forged]).toEqual(['PASS', undefined]);
    expect(e.held_to).toEqual({ against: 'base', base_library_sha256: entryOf(baseData).library_sha256 });
    for (const op of ['keygen', 'enc']) {
      const r = recordOf(headData, op);
      expect(r.status, op).toBe('complete');
      expect(
        r.replays!.filter((x) => x.check === 'base').map((x) => x.outcome),
        op,
      ).toEqual(['agrees']);
    }
    const dec = recordOf(headData, 'dec');
    expect(dec.status).toBe('complete');
    expect(dec.replays!.every((x) => x.check === 'inputs' && x.outcome === 'agrees')).toBe(true);
    expect(validateDataset(join(headData, 'x'))).toEqual([]);
    // The comparison (the pull request's comment) says what the changed library was held to.
    const compared = await runCli(['compare', '--base', baseData, '--head', headData, '--system', 'x']);
    const text = compared.out.join('\n');
    expect(text).toContain('**Outputs held to**');
    expect(text).toContain(
      "- `kem-1/good`: the pull request's base library: on unseen seeds, on a segment of its timed trials, and dec's inputs made by the base",
    );
  }, 300_000);

  it("fake when timed answers unseen seeds honestly; the base library's replay of a trial segment finds it", async () => {
    const { headData } = await pullRequest(kemCampaign('fake_when_timed.c'), kemCampaign());
    const e = entryOf(headData);
    expect(e.kat).toBe('PASS');
    expect(e.held_to).toMatchObject({ against: 'base' });
    const keygen = recordOf(headData, 'keygen');
    // Its own replay agrees with it: only the base's shows the fake.
    expect(keygen.replays!.filter((x) => x.check === undefined).map((x) => x.outcome)).toEqual(['agrees']);
    expect(keygen.forged).toMatch(/^FORGED: trial \d+, calls? [\d–]+: the outputs differ from the base library's on the trial's seed$/);
    expect(e.forged?.operation).toBe('keygen');
  }, 300_000);
});

describe("nightlies with a secret seed: a changed library must give its predecessor's answers", () => {
  const secret = Buffer.from('5eed'.repeat(16), 'hex');
  // Serial, so that the KAT is one process: fake_everywhere.c is honest where its process's first
  // keygen is record 0's, which a KAT in pieces does not give it (below).
  const night = (campaign: string, data: string, unseenSeed?: Buffer, serial = true) =>
    runCampaign({
      campaignDir: campaign,
      system: 'x',
      dataDir: data,
      only: /^kem-1\/good$/,
      phases: new Set(['build', 'kat'] as const),
      serial,
      ...(unseenSeed ? { unseenSeed } : {}),
    });

  it('a library honest only where its process starts at record 0 passes a serial KAT, and fails one in pieces', async () => {
    if ((allowedCpus() ?? []).length < 2) return void console.warn('skipped: needs two CPUs this process may use');
    const [serial, pieces] = [tempDir(), tempDir()];
    await night(kemCampaign('fake_everywhere.c'), serial);
    // Nothing timed: the timing core is lent to the pool, and the KAT borrows it for a second piece.
    await night(kemCampaign('fake_everywhere.c'), pieces, undefined, false);
    expect([entryOf(serial).kat, entryOf(pieces).kat]).toEqual(['PASS', 'MISMATCH']);
  }, 300_000);

  it('records a digest and a seed id, never the seed; an honest change reproduces it; fake everywhere is FORGED, and so is one that fails there', async () => {
    const data = tempDir();
    await night(kemCampaign(), data, secret);
    const first = entryOf(data);
    expect(first.unseen).toMatchObject({ seed_id: seedId(secret), records: 10 });
    expect(first.unseen!.digest).toMatch(/^[0-9a-f]{64}$/);
    expect(first.held_to).toEqual({ against: 'published-kat', why: 'first-version' });
    const text = allText(data).toLowerCase();
    for (const hidden of [secret, instanceSeed(secret, 'kem-1/good')]) expect(text).not.toContain(hidden.toString('hex'));

    await night(kemCampaign('slower'), data, secret);
    const second = entryOf(data);
    expect(second.library_sha256).not.toBe(first.library_sha256);
    expect([second.forged, second.unseen!.digest]).toEqual([undefined, first.unseen!.digest]);
    expect(second.held_to).toEqual({ against: 'night', night_utc: first.unseen!.confirmed_utc, seed_id: seedId(secret) });

    await night(kemCampaign('fake_everywhere.c'), data, secret);
    const third = entryOf(data);
    expect(third.kat).toBe('PASS');
    expect(third.forged?.detail).toMatch(/^FORGED: its outputs on unseen seeds differ from those of the library of \d{4}-\d\d-\d\d$/);
    // The truth stays the honest library's.
    expect(third.unseen!.digest).toBe(first.unseen!.digest);

    // One that fails wherever it would fake: FORGED, its failure kept as the status word alone.
    await night(kemCampaign('fail_when_fake'), data, secret);
    const fourth = entryOf(data);
    expect(fourth.kat).toBe('PASS');
    expect(fourth.forged?.detail).toMatch(
      /^FORGED: on unseen seeds, where the library of \d{4}-\d\d-\d\d answered, it failed \(CRYPTOFAIL\)$/,
    );
    expect(JSON.stringify(fourth)).not.toContain('1234567');

    // The pages say it: FORGED, what the instance was held to, and that the check was on.
    const pages = tempDir();
    expect((await runCli(['report', join(data, 'x'), '--out', pages])).code).toBe(0);
    const summary = readFileSync(join(pages, 'performance', 'summary_x.md'), 'utf8');
    expect(summary).toContain(
      `The unseen-seed check was on: the last run held each changed library to its predecessor's answers on the secret seed of id ${seedId(secret)}.`,
    );
    expect(summary).toMatch(
      /\| `good` \| the digest of its answers on the secret unseen seed, as of the night of \d{4}-\d\d-\d\d — FORGED there \|/,
    );
    expect(readFileSync(join(pages, 'kem-1', 'perf_x.md'), 'utf8')).toContain('FORGED');
  }, 300_000);

  it("a nightly from a clean checkout is held to the data branch's digests, and carries them on (the example workflow's shards)", async () => {
    // Night 1, published: its build.json on the data branch of a real repository.
    const first = tempDir();
    await night(kemCampaign(), first, secret);
    const remote = await initBare(tempDir());
    const repo = await clone(remote, tempDir());
    cpSync(join(first, 'x'), join(repo, 'performance', 'data', 'x'), { recursive: true });
    await git(repo, 'checkout', '-q', '-b', 'data');
    await git(repo, 'add', '-A');
    await git(repo, 'commit', '-q', '-m', 'night 1');
    await git(repo, 'push', '-q', 'origin', 'data');
    await git(repo, 'fetch', '-q', 'origin');
    const truth = await publishedUnseenTruth(repo, 'data', 'performance/data/x', tempDir());
    expect(truth?.['kem-1/good']?.unseen.digest).toBe(entryOf(first).unseen!.digest);
    expect(await publishedUnseenTruth(repo, 'no-such-branch', 'performance/data/x', tempDir())).toBeUndefined();

    // Night 2, each shard in a fresh folder: an honest change reproduces the digest, the fake is FORGED.
    const nightWith = async (campaign: string) => {
      const data = tempDir();
      await runCampaign({
        campaignDir: campaign,
        system: 'x',
        dataDir: data,
        only: /^kem-1\/good$/,
        phases: new Set(['build', 'kat'] as const),
        unseenSeed: secret,
        unseenTruth: truth!,
      });
      return entryOf(data);
    };
    const honest = await nightWith(kemCampaign('slower'));
    expect([honest.forged, honest.held_to?.against, honest.unseen?.digest]).toEqual([undefined, 'night', entryOf(first).unseen!.digest]);
    const fake = await nightWith(kemCampaign('fake_everywhere.c'));
    expect(fake.forged?.operation).toBe(UNSEEN_CHECK);
    // The published truth stays the honest library's, for the merge to carry on.
    expect(fake.unseen?.digest).toBe(entryOf(first).unseen!.digest);
    // A night without the seed carries it on too: its evidence replaces the published entry.
    const unseeded = tempDir();
    await runCampaign({
      campaignDir: kemCampaign(),
      system: 'x',
      dataDir: unseeded,
      only: /^kem-1\/good$/,
      phases: new Set(['build', 'kat'] as const),
      unseenTruth: truth!,
    });
    expect(entryOf(unseeded).unseen).toEqual(entryOf(first).unseen);
  }, 300_000);

  it('the CLI reads the seed from NGCC_UNSEEN_SEED, and refuses a bad one naming the variable', async () => {
    const data = tempDir();
    const args = ['run', kemCampaign(), '--system', 'x', '--out', data, '--only', '^kem-1/good$', '--phases', 'build,kat'];
    const before = process.env.NGCC_UNSEEN_SEED;
    try {
      process.env.NGCC_UNSEEN_SEED = 'abc';
      const bad = await runCli(args);
      expect([bad.code, bad.err.join('\n')]).toEqual([
        2,
        'error: environment: NGCC_UNSEEN_SEED: the unseen seed is not hex digits (two per byte) (give at least 32 bytes as hex)',
      ]);
      process.env.NGCC_UNSEEN_SEED = secret.toString('hex');
      expect((await runCli(args)).code).toBe(0);
    } finally {
      if (before === undefined) delete process.env.NGCC_UNSEEN_SEED;
      else process.env.NGCC_UNSEEN_SEED = before;
    }
    expect(entryOf(data).unseen?.seed_id).toBe(seedId(secret));
    expect(JSON.parse(readFileSync(join(data, 'x', 'campaign.json'), 'utf8')).last_run.unseen_seed_id).toBe(seedId(secret));
  }, 300_000);

  it('without a seed nothing is held and campaign.json says the check was off; a comment is no new version, new manifest lines are', async () => {
    const data = tempDir();
    await night(kemCampaign(), data);
    expect(entryOf(data).unseen).toBeUndefined();
    const campaign = JSON.parse(readFileSync(join(data, 'x', 'campaign.json'), 'utf8'));
    expect(campaign.last_run.unseen_seed_id).toBeNull();
    const pages = tempDir();
    expect((await runCli(['report', join(data, 'x'), '--out', pages])).code).toBe(0);
    const page = readFileSync(join(pages, 'kem-1', 'perf_x.md'), 'utf8');
    expect(page).toContain('the unseen-seed check was off: the last run had no secret seed');
    expect(page).toMatch(/\| `good` \| its published KAT only \|/);

    await night(kemCampaign(), data, secret);
    const recorded = entryOf(data).unseen!;
    const katText = readFileSync(join(data, 'x', entryOf(data).kat_file!), 'latin1');
    const manifest = (dir: string) => join(dir, 'kem-1', 'kat.sha256');
    // A comment and the digests' case changed: the same manifest lines, so the fake is held to the honest answers.
    const commented = kemCampaign('fake_everywhere.c');
    const lines = readFileSync(manifest(commented), 'utf8').split('\n');
    const goodLine = lines.find((l) => / good\//.test(l))!;
    const reordered = ['# tidied', ...lines.filter((l) => l !== goodLine), goodLine.replace(/^\S+/, (d) => d.toUpperCase())];
    writeFileSync(manifest(commented), `${reordered.join('\n')}\n`);
    await night(commented, data, secret);
    expect(entryOf(data).forged?.operation).toBe(UNSEEN_CHECK);

    // A new version of the algorithm: other manifest lines for the instance (here its digest by the nolen rule).
    const next = kemCampaign('fake_everywhere.c');
    const nolen = canonicalDigest(katText, 'nolen');
    writeFileSync(manifest(next), readFileSync(manifest(next), 'utf8').replace(/^\S+ strict good\//m, `${nolen} nolen good/`));
    const fresh = tempDir();
    await night(kemCampaign(), fresh, secret);
    await night(next, fresh, secret);
    const e = entryOf(fresh);
    expect([e.kat, e.forged]).toEqual(['PASS', undefined]);
    expect(e.held_to).toEqual({ against: 'published-kat', why: 'new-manifest' });
    expect(e.unseen!.digest).not.toBe(recorded.digest);
  }, 300_000);
});

describe("an unseen seed runs the KAT's own procedure", () => {
  it('given the published seed, every category answers with its published KAT text, and another seed changes it', async () => {
    const data = tempDir();
    const campaignDir = join(repoRoot, 'examples', 'campaign');
    await runCampaign({ campaignDir, system: 'x', dataDir: data, phases: new Set(['build', 'kat'] as const) });
    const build = JSON.parse(readFileSync(join(data, 'x', 'build.json'), 'utf8')) as BuildJson;
    const tools = await harnessTools();
    const candidates = loadCampaign(campaignDir).candidates;
    const published = {
      // ICCS: the seed DRNG's nonce, "seed" 16 times; NIST: PQCgenKAT's entropy 00..2f; a hash file: its name alone.
      iccs: Buffer.from('seed'.repeat(16), 'latin1'),
      nist: Buffer.concat([Buffer.from([...Array(48).keys()]), Buffer.alloc(16)]),
      hash: Buffer.alloc(UNSEEN_SEED_BYTES),
    };
    const types = new Set<string>();
    for (const c of candidates)
      for (const inst of c.instances) {
        const e = build.instances[`${c.id}/${inst.label}`]!;
        expect(e.kat, `${c.id}/${inst.label}`).toBe('PASS');
        const mode = isNistKatRng(c.katRng) ? 'nist' : 'iccs';
        const ask = (seed: Buffer) =>
          answerUnseenSeed({
            driver: tools.driver,
            library: join(campaignDir, e.library!),
            type: driverTypeOf(c, inst),
            mode,
            nistPrefix: nistEntryPrefix(inst),
            digestMode: 'strict',
            seed,
            timeoutMs: 120_000,
          });
        const seed = c.type === 'hash' ? published.hash : published[mode];
        const same = await ask(seed);
        const other = await ask(Buffer.from(seed.map((b) => b ^ 1)));
        if ('failure' in same || 'failure' in other) throw new Error(`${c.id}/${inst.label}: ${JSON.stringify([same, other])}`);
        const katFile = c.type === 'hash' ? `kat/${c.id}/${inst.label}/KAT_2_12_${inst.label}.txt` : e.kat_file!;
        const kat = readFileSync(join(data, 'x', katFile), 'latin1');
        // The manifest may have asked for fewer records (`:1`) or more: the shorter text begins the longer.
        const [shorter, longer] = kat.length < same.text.length ? [kat, same.text] : [same.text, kat];
        expect(longer.startsWith(shorter), `${c.id}/${inst.label}`).toBe(true);
        expect(shorter.length, `${c.id}/${inst.label}`).toBeGreaterThan(1000);
        expect(other.digest, `${c.id}/${inst.label}`).not.toBe(same.digest);
        types.add(`${c.type}:${mode}`);
      }
    expect([...types].sort()).toEqual(['hash:iccs', 'kem:iccs', 'kem:nist', 'kex:iccs', 'sig:nist']);
  }, 600_000);
});

describe("a pull request's base replays a segment of each operation", () => {
  it('verify: the replay holds the key pair and the signed pool too, not only which signatures are accepted', async () => {
    const dir = tempDir();
    const tools = await harnessTools();
    const honest = variant(dir, 'honest', 'sig', 'sig_keygen', KEYGEN, 'return honest_sig_keygen(pk, pk_len, sk, sk_len);');
    const twin = variant(dir, 'twin', 'sig', 'sig_keygen', KEYGEN, 'return honest_sig_keygen(pk, pk_len, sk, sk_len);');
    // Another key pair from the same seed (one more draw first): it signs and verifies its own alike.
    const other = variant(
      dir,
      'other',
      'sig',
      'sig_keygen',
      KEYGEN,
      'unsigned char x[8]; get_random_number(&drng_algorithm, x, 64); return honest_sig_keygen(pk, pk_len, sk, sk_len);',
    );
    const planning = planningSchema.parse({ trials: 2, trial_target_s: 0.01, op_budget_s: 2, min_measurements: 10, warmups: 1 });
    const verify = async (library: string) =>
      (
        await measureOperations([
          {
            driver: tools.driver,
            library,
            libraryShown: 'lib.so',
            type: 'sig',
            operation: 'verify',
            cpu: -1,
            rng: 'iccs-drng',
            sandbox: 'bwrap',
            planning,
            truthLibrary: honest,
          },
        ])
      )[0]!;
    const agreed = await verify(twin);
    expect(agreed.replays!.map((x) => [x.check ?? 'own', x.outcome])).toEqual([
      ['own', 'agrees'],
      ['base', 'agrees'],
    ]);
    const differed = await verify(other);
    expect(differed.replays!.map((x) => [x.check ?? 'own', x.outcome])).toEqual([
      ['own', 'agrees'],
      ['base', 'differs'],
    ]);
    expect(differed.forged).toMatch(/^FORGED: trial \d+, calls? [\d–]+: the outputs differ from the base library's on the trial's seed$/);
  }, 300_000);
});
