import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildInstance } from '../src/compile/compile.js';
import { harnessTools, type HarnessTools } from '../src/compile/harnessTools.js';
import { type Candidate, loadCandidate } from '../src/config/campaign.js';
import { type ManifestEntry, parseManifest, readManifest } from '../src/config/katManifest.js';
import { writePqcleanCampaign } from '../src/catalogs/pqclean.js';
import { runHashKat } from '../src/kat/hashKat.js';
import { mergeMetas, pieceRanges, runInPieces } from '../src/kat/katPieces.js';
import { canonicalDigest } from '../src/kat/manifest.js';
import { classifyDriverFailure, driverFailed, katTextOf, type KatOutcome, type KatRequest, runKat } from '../src/kat/runKat.js';
import { allowedCpus } from '../src/env/cpus.js';
import type { BuildJson } from '../src/evidence/fileTypes.js';
import { type DriverRun, runDriver } from '../src/sandbox/runProcess.js';
import { goodKemCampaign } from './helpers/campaigns.js';
import { runCli as cli } from './helpers/cli.js';
import { buildRequestFor, buildToyKem } from './helpers/build.js';
import { PQCLEAN, readPublished, schemeInfo } from './helpers/pqclean.js';
import { repoRoot, tempDir, testData } from './helpers/tmp.js';
import { KEYGEN, variant, variants } from './helpers/toyVariant.js';

// The property: a KAT computed in pieces, joined in record order, is the serial KAT byte for byte.
// Where a digest was published, the serial run still gives it: PQClean's first-record digests (test
// data), the fixtures' and the SM3 example's kat.sha256, so the serial text is not this code's word.
const fixtures = join(repoRoot, 'test', 'fixtures');
const published = [
  ...readPublished(join(testData, 'reference', 'pqclean-kat.sha256')),
  ...readPublished(join(testData, 'reference', 'pqclean-kat-hqc.sha256')),
  ...readPublished(join(testData, 'pqclean-falcon-kat.txt')),
];

let tools: HarnessTools;
beforeAll(async () => {
  tools = await harnessTools();
});

function request(candidate: Candidate, label: string, library: string, manifest: ManifestEntry[], pieces: number): KatRequest {
  const spec = candidate.instances.find((i) => i.label === label)!;
  return {
    candidate,
    label,
    ...(spec.nist_prefix ? { nistPrefix: spec.nist_prefix } : {}),
    library,
    driver: tools.driver,
    outDir: tempDir(),
    manifest,
    timeoutMs: 300_000,
    pieces,
  };
}

const manifestOf = (c: Candidate): ManifestEntry[] => readManifest(join(c.folder, 'kat.sha256'));
const fileOf = (req: KatRequest, o: KatOutcome, file = o.file!) => readFileSync(join(req.outDir, file), 'latin1');

/** Runs the KAT serially and in each number of pieces; every joined file must be the serial one. */
async function sameInPieces(candidate: Candidate, label: string, library: string, manifest: ManifestEntry[], counts: number[]) {
  const serialReq = request(candidate, label, library, manifest, 1);
  const serial = await runKat(serialReq);
  const text = fileOf(serialReq, serial);
  for (const pieces of counts) {
    const req = request(candidate, label, library, manifest, pieces);
    const o = await runKat(req);
    expect([o.status, o.detail], `${label} in ${pieces} pieces`).toEqual([serial.status, serial.detail]);
    expect(o.file).toBe(serial.file);
    expect(fileOf(req, o) === text, `${label} in ${pieces} pieces: the joined file is the serial one`).toBe(true);
    expect(o.sizes).toEqual(serial.sizes);
    expect(o.draws).toEqual(serial.draws);
    expect(Object.keys(o.callSeconds ?? {})).toEqual(Object.keys(serial.callSeconds ?? {}));
  }
  return { serial, text };
}

/** A one-instance candidate of the scheme, as the PQClean catalogue writes it (ngcc-perf pqclean-campaign). */
function pqcleanCandidate(scheme: string): Candidate {
  const info = schemeInfo(scheme);
  const out = tempDir();
  writePqcleanCampaign(out, [info], [], PQCLEAN);
  const id = info.kind === 'sig' ? 'sign-1' : info.katRng ? 'kem-2' : 'kem-1';
  return loadCandidate(join(out, id), 'candidate.yml');
}

describe('a KAT in pieces, joined in record order, is the serial KAT byte for byte', () => {
  it('cuts the records into contiguous ranges of near-equal work, the fresh checks in exactly one', () => {
    const spans = (r: ReturnType<typeof pieceRanges>) => r.map((p) => `${p.from}:${p.to}${p.fresh ? ':fresh' : ''}`);
    // Without weight the fresh checks go with the last piece.
    expect(spans(pieceRanges(10, 3))).toEqual(['0:4', '4:7', '7:10:fresh']);
    expect(pieceRanges(100, 7).map((p) => p.to - p.from)).toEqual([15, 15, 14, 14, 14, 14, 14]);
    expect(spans(pieceRanges(3, 11))).toEqual(['0:1', '1:2', '2:3:fresh']);
    // Two fresh records' worth: 12 units in 6 pieces of 2, the last the fresh checks alone.
    expect(spans(pieceRanges(10, 6, 2))).toEqual(['0:2', '2:4', '4:6', '6:8', '8:10', '10:10:fresh']);
    // 102 units in 7: the last piece has two records fewer, for the fresh checks.
    expect(spans(pieceRanges(100, 7, 2))).toEqual([
      '0:15',
      '15:30',
      '30:45',
      '60:74'.slice(0, 0) || '45:60',
      '60:74',
      '74:88',
      '88:100:fresh',
    ]);
    // More pieces than units: one per record, one for the fresh checks, none empty otherwise.
    expect(spans(pieceRanges(3, 11, 2))).toEqual(['0:1', '1:2', '2:3', '3:3:fresh']);
    for (const [records, pieces, fresh] of [
      [10, 4, 2],
      [100, 6, 2],
      [7, 7, 2],
      [4097, 5, 0],
    ] as const) {
      const r = pieceRanges(records, pieces, fresh);
      expect(r.filter((p) => p.fresh)).toHaveLength(1);
      expect(r[0]!.from).toBe(0);
      expect(r[r.length - 1]!.to).toBe(records);
      for (let k = 1; k < r.length; k++) expect(r[k]!.from).toBe(r[k - 1]!.to);
    }
  });

  // ML-KEM-1024 and HQC-128 (its own generator behind randombytes), Falcon-512: the PQCgenKAT
  // schedule with every seed, and for a signature every message, drawn before the first record.
  it.each(['ml-kem-1024', 'hqc-128', 'falcon-512'])(
    '%s (NIST mode, PQClean): 100 records in 7 pieces and in 2; the serial run keeps its published digest',
    async (scheme) => {
      const c = pqcleanCandidate(scheme);
      const b = await buildInstance(buildRequestFor(c, 0, { timeoutMs: 600_000 }));
      expect(b.ok, b.log).toBe(true);
      const { serial, text } = await sameInPieces(c, scheme, b.library, [], [7, 2]);
      expect(serial.records).toBe(100);
      expect(text.startsWith(`# ${schemeInfo(scheme).prefix}\n\ncount = 0\n`)).toBe(true);
      const digest = published.find((k) => k.scheme === scheme)!;
      expect(canonicalDigest(text, 'strict', digest.records ?? 1)).toBe(digest.sha256);
    },
    600_000,
  );

  it('the ICCS toy KEM and toy signature (seed DRNG, message DRNG): 10 records in 3 pieces, in 10, in 11; PASS their kat.sha256', async () => {
    const dir = tempDir();
    const kem = loadCandidate(join(fixtures, 'campaign', 'kem-1'), 'candidate.yml');
    const sig = loadCandidate(join(fixtures, 'campaign', 'sign-1'), 'candidate.yml');
    const kemKat = await sameInPieces(kem, 'good', buildToyKem(dir), manifestOf(kem), [3, 10, 11]);
    expect([kemKat.serial.status, kemKat.serial.records]).toEqual(['PASS', 10]);
    const sigKat = await sameInPieces(sig, 'toy-sig', variants(dir, 'toy-sig', 'sig', []), manifestOf(sig), [3, 10, 11]);
    expect([sigKat.serial.status, sigKat.serial.records]).toEqual(['PASS', 10]);
    // Each record's message is the message DRNG's next: 56 + 8i bytes, drawn in every piece before its own.
    expect([...sigKat.text.matchAll(/^M_Len = (\d+)$/gm)].map((m) => Number(m[1]))).toEqual([...Array(10).keys()].map((i) => 56 + 8 * i));
  });

  it('the toy key exchange: 10 records in 3 pieces', async () => {
    const c = loadCandidate(join(fixtures, 'kex', 'kex-1'), 'candidate.yml');
    const index = c.instances.findIndex((i) => i.label === 'good');
    const b = await buildInstance(buildRequestFor(c, index));
    expect(b.ok, b.log).toBe(true);
    const { serial } = await sameInPieces(c, 'good', b.library, [], [3]);
    expect([serial.status, serial.records]).toEqual(['NOKAT', 10]);
  });

  it("the SM3 example's hash files in 3 pieces and in 7 PASS their kat.sha256, each file the serial one; KAT_2_12 cut to 100 records too", async () => {
    const c = loadCandidate(join(repoRoot, 'examples', 'campaign', 'hash-80'), 'candidate.yml');
    const b = await buildInstance(buildRequestFor(c, 0));
    expect(b.ok, b.log).toBe(true);
    const label = c.instances[0]!.label;
    const cut = parseManifest(`${'0'.repeat(64)} strict:100 ${label}/KAT_2_12_${label}.txt\n`, 'kat.sha256');
    for (const manifest of [manifestOf(c), cut]) {
      const serialReq = request(c, label, b.library, manifest, 1);
      const serial = await runHashKat(serialReq);
      expect(serial.status).toBe(manifest === cut ? 'MISMATCH' : 'PASS');
      expect(serial.files!.map((f) => f.file)).toEqual(
        manifest === cut ? [`KAT_2_12_${label}.txt`] : ['KAT_2_12', 'KAT_2_23', 'KAT_Loop'].map((k) => `${k}_${label}.txt`),
      );
      for (const pieces of [3, 7]) {
        const req = request(c, label, b.library, manifest, pieces);
        const o = await runHashKat(req);
        expect([o.status, o.files!.map((f) => f.status)]).toEqual([serial.status, serial.files!.map((f) => f.status)]);
        for (const f of serial.files!)
          expect(fileOf(req, o, f.file) === fileOf(serialReq, serial, f.file), `${f.file} in ${pieces} pieces`).toBe(true);
      }
    }
  });
});

describe('a failure in pieces', () => {
  const dir = tempDir();
  const kem = loadCandidate(join(fixtures, 'campaign', 'kem-1'), 'candidate.yml');
  /** The toy KEM whose keygen fails in the records whose coins are those of `records` (sk begins with them). */
  const failingAt = async (records: number[]): Promise<string> => {
    const req = request(kem, 'good', buildToyKem(dir), [], 1);
    const sks = [...fileOf(req, await runKat(req)).matchAll(/^SK = ([0-9A-F]{64})/gm)].map((m) => m[1]!);
    const coins = records.map((r) => `"${sks[r]!.replace(/(..)/g, '\\x$1')}"`);
    const body = `static const char *const bad[] = {${coins.join(', ')}};
int rc = honest_kem_keygen(pk, pk_len, sk, sk_len);
for (unsigned i = 0; i < sizeof bad / sizeof bad[0]; i++) if (memcmp(sk, bad[i], 32) == 0) return 7;
return rc;`;
    return variant(dir, `fails-${records.join('-')}`, 'kem', 'kem_keygen', KEYGEN, body);
  };

  it("is the earliest failing piece's, as the serial run's: a keygen failing at record 7 (the third of 3 pieces), then at records 5 and 8", async () => {
    for (const [records, detail] of [
      [[7], 'record 7: kem_keygen returned 7'],
      [[5, 8], 'record 5: kem_keygen returned 7'],
    ] as const) {
      const lib = await failingAt([...records]);
      for (const pieces of [1, 3]) {
        const o = await runKat(request(kem, 'good', lib, manifestOf(kem), pieces));
        expect([o.status, o.detail], `failing at ${records.join(', ')}, ${pieces} piece(s)`).toEqual(['CRYPTOFAIL', detail]);
      }
    }
  });

  it('of the fresh seeds comes from the one piece marked :fresh, which may run them alone', async () => {
    // Every key pair from one fixed seed: the records agree with themselves, the fresh key pairs with each other.
    const lib = variant(
      dir,
      'one-key',
      'kem',
      'kem_keygen',
      KEYGEN,
      'static const unsigned char fixed[64] = {7}; init_random_number(&drng_algorithm, fixed, 64); return honest_kem_keygen(pk, pk_len, sk, sk_len);',
    );
    const o = await runKat(request(kem, 'good', lib, [], 3));
    expect([o.status, o.detail]).toEqual(['CRYPTOFAIL', 'fresh seed 1: the same public key as from another fresh seed']);
    const [first, later] = await Promise.all(
      ['piece=0:4', 'piece=4:7'].map((piece) => runDriver([tools.driver, lib], ['kat', 'kem', 'iccs', '10', piece], { timeoutMs: 60_000 })),
    );
    expect([first!.output.status, later!.output.status]).toEqual(['PASS', 'PASS']);
    // The fresh checks alone, after the last record: no record, and the failure only they find.
    const alone = await runDriver([tools.driver, lib], ['kat', 'kem', 'iccs', '10', 'piece=10:10:fresh'], { timeoutMs: 60_000 });
    expect([alone.output.status, alone.output.statusDetail, katTextOf(alone.output.lines)]).toEqual([
      'CRYPTOFAIL',
      'fresh seed 1: the same public key as from another fresh seed',
      '',
    ]);
    // Its first fresh record gives the mark a record would, which its timeout follows.
    expect(alone.run.channel!.marks.filter((m) => m.name === 'kat-record')).toHaveLength(1);
  });
});

describe('the kat job with piece=FROM:TO', () => {
  const dir = tempDir();

  it('sends records FROM..TO-1 only, the mark after its first, and its meta of those records', async () => {
    const lib = buildToyKem(dir);
    const d = await runDriver([tools.driver, lib], ['kat', 'kem', 'iccs', '10', 'piece=4:7'], { timeoutMs: 60_000 });
    expect(d.output.status).toBe('PASS');
    expect([...katTextOf(d.output.lines).matchAll(/^Count = (\d+)$/gm)].map((m) => Number(m[1]))).toEqual([4, 5, 6]);
    expect(d.run.channel!.marks.filter((m) => m.name === 'kat-record')).toHaveLength(1);
    expect(d.output.meta.records).toBe('3');
  });

  it('refuses a range outside the records, an empty one, and KAT_Loop, as USAGE', async () => {
    const lib = buildToyKem(dir);
    const kat = (job: string[]) => runDriver([tools.driver, lib], job, { timeoutMs: 60_000 });
    for (const piece of ['piece=3:11', 'piece=5:5', 'piece=5:5:fresh', 'piece=0:3:stale', 'piece=a:b']) {
      const d = await kat(['kat', 'kem', 'iccs', '10', piece]);
      expect([d.output.status, d.output.statusDetail], piece).toEqual(['USAGE', expect.stringMatching(/^piece=/)]);
    }
    const sm3 = loadCandidate(join(repoRoot, 'examples', 'campaign', 'hash-80'), 'candidate.yml');
    const b = await buildInstance(buildRequestFor(sm3, 0));
    const loop = await runDriver([tools.driver, b.library], ['kat', 'hash:256', 'iccs', 'KAT_Loop', '10', 'piece=0:1'], {
      timeoutMs: 60_000,
    });
    expect([loop.output.status, loop.output.statusDetail]).toEqual(['USAGE', expect.stringMatching(/^KAT_Loop cannot be split/)]);
  });

  it('merges the pieces’ metas: the fewest draws, the longest call, records summed; sizes that differ are named', () => {
    const a = { pk_bytes: '800', draws_keygen: '3', call_s_keygen: '0.002', records: '4' };
    const b = { pk_bytes: '800', draws_keygen: '2', call_s_keygen: '0.001', records: '6' };
    expect(mergeMetas([a, b])).toEqual({ meta: { pk_bytes: '800', draws_keygen: '2', call_s_keygen: '0.002', records: '10' } });
    expect(mergeMetas([a, b, { ...b, pk_bytes: '801' }])).toEqual({ differs: ['pk_bytes', 0, 2] });
  });

  it('fails LOADFAIL, naming the size and the pieces, when the pieces’ sizes differ', async () => {
    const piece = (pk: string): DriverRun => ({
      run: { command: [], exitCode: 0, signal: null, stdout: '', stderr: '', timedOut: false, truncated: false, wallSeconds: 1 },
      output: { meta: { pk_bytes: pk, records: '5' }, lines: [], status: 'PASS' },
    });
    const sizes = ['800', '801'];
    const d = await runInPieces(10, 2, async (field) => piece(sizes[field[0] === 'piece=0:5' ? 0 : 1]!), driverFailed);
    expect(classifyDriverFailure(d)).toEqual({
      status: 'LOADFAIL',
      detail: "the library's pk_bytes differs between the KAT's processes: 800 for records 0–4, 801 for records 5–9",
    });
  });
});

describe("a campaign's KAT in pieces", () => {
  it('spreads over the pool’s cores, each held by its lock while the pieces run, and writes the serial KAT', async () => {
    // Nothing is timed, so the timing core is lent to the pool: two pool cores on a 2-core host.
    if ((allowedCpus() ?? []).length < 2) return void console.warn('skipped: needs two CPUs this process may use');
    const root = goodKemCampaign(['a'], 'systems:\n  s: {}\n');
    const run = async (extra: string[]) => {
      const data = tempDir();
      const r = await cli(['run', root, '--system', 's', '--out', data, '--phases', 'build,kat', ...extra]);
      expect(r.code, r.out.join('\n')).toBe(0);
      const entry = (JSON.parse(readFileSync(join(data, 's', 'build.json'), 'utf8')) as BuildJson).instances['kem-1/a']!;
      const holds = (JSON.parse(readFileSync(join(data, 's', 'campaign.json'), 'utf8')) as { cpu_holds: Array<{ what: string }> })
        .cpu_holds;
      const kat = readFileSync(join(data, 's', 'kat', 'kem-1', 'a', 'KAT_KEM_a.txt'), 'latin1');
      return { kat: entry.kat, borrowed: holds.filter((h) => h.what === 'kem-1/a kat').length, text: kat };
    };
    // --serial: one instance at a time, nothing beside it, so its KAT is one process.
    const [pieces, serial] = [await run(['--jobs', '1']), await run(['--serial'])];
    // The digest of the toy's published KAT (test/fixtures/campaign/kem-1/kat.sha256), and the same bytes.
    expect([pieces.kat, serial.kat]).toEqual(['PASS', 'PASS']);
    expect([pieces.borrowed > 0, serial.borrowed]).toEqual([true, 0]);
    expect(pieces.text).toBe(serial.text);
    expect([...pieces.text.matchAll(/^Count = (\d+)$/gm)].map((m) => Number(m[1]))).toEqual([...Array(10).keys()]);
  }, 600_000);
});
