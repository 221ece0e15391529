import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { CampaignSummary } from '../src/campaign/context.js';
import { runCampaign } from '../src/campaign/runCampaign.js';
import { harnessTools, type HarnessTools } from '../src/compile/harnessTools.js';
import { digestBitsOf } from '../src/config/hashInstance.js';
import { instanceSchema } from '../src/config/schemas.js';
import { hashKatLimit, worstStatus } from '../src/kat/hashKat.js';
import { canonicalDigest } from '../src/kat/manifest.js';
import { runDriver } from '../src/sandbox/runProcess.js';
import { repoRoot, tempDir } from './helpers/tmp.js';
import { toyHash } from './helpers/toyVariant.js';

// Truth from outside the code under test: OpenSSL's SM3 for whole bytes, and for the rest a model of
// the ICCS generator and its DRNG written apart from the C code (test/helpers/iccs_hash_kat.py).
const example = join(repoRoot, 'examples', 'campaign');
const model = join(repoRoot, 'test', 'helpers', 'iccs_hash_kat.py');
const python = (...args: string[]) => execFileSync('python3', [model, ...args], { encoding: 'latin1', maxBuffer: 64 << 20 });

const katOnly = (campaignDir: string, dataDir: string, only?: RegExp): Promise<CampaignSummary> =>
  runCampaign({ campaignDir, system: 'test', dataDir, phases: new Set(['build', 'kat']), ...(only ? { only } : {}) });

interface HashRecord {
  bits: number;
  msg: string;
  dst: string;
}

function records(text: string): HashRecord[] {
  return text
    .trim()
    .split('\n\n')
    .map((block) => {
      const field = (k: string) => new RegExp(`^${k} = (.*)$`, 'm').exec(block)?.[1] ?? '';
      return { bits: Number(field('Msg_Len')), msg: field('Msg'), dst: field('Dst') };
    });
}

describe('the SM3 example (hash-80) against OpenSSL and an independent generator model', () => {
  let summary: CampaignSummary;
  let kat212: string;
  const data = tempDir();

  beforeAll(async () => {
    summary = await katOnly(example, data, /^hash-80\//);
    kat212 = readFileSync(join(data, 'test', 'kat', 'hash-80', 'SM3-256', 'KAT_2_12_SM3-256.txt'), 'latin1');
  }, 300_000);

  it('PASSes every line of its kat.sha256 (KAT_2_12, KAT_2_23, KAT_Loop cut to 1000 iterations)', () => {
    const inst = summary.instances.find((i) => i.key === 'hash-80/SM3-256')!;
    expect(inst.detail ?? '').toBe('');
    expect(inst.kat).toBe('PASS');
    const log = readFileSync(join(data, 'test', 'kat', 'hash-80', 'SM3-256.log'), 'utf8');
    expect(log).toMatch(/^file {3}KAT_2_12_SM3-256\.txt PASS;/m);
    expect(log).toMatch(/^file {3}KAT_2_23_SM3-256\.txt PASS;/m);
    expect(log).toMatch(/^file {3}KAT_Loop_SM3-256\.txt \(:1000\) PASS;/m);
    const build = JSON.parse(readFileSync(join(data, 'test', 'build.json'), 'utf8'));
    expect(build.instances['hash-80/SM3-256'].kat_loop_iterations).toBe(1000);
  });

  it('KAT_2_12: the 4097 messages and digests equal the independent model, byte for byte', () => {
    const ours = records(kat212);
    const theirs = records(python('KAT_2_12'));
    expect(ours).toHaveLength(4097);
    expect(ours.map((r) => r.bits)).toEqual([...Array(4097).keys()]);
    expect(ours.map((r) => r.msg)).toEqual(theirs.map((r) => r.msg));
    expect(ours.map((r) => r.dst)).toEqual(theirs.map((r) => r.dst));
  });

  it("KAT_2_23: the file's text is the official generator's, byte for byte (the model follows gen_KAT_2_23)", () => {
    const ours = readFileSync(join(data, 'test', 'kat', 'hash-80', 'SM3-256', 'KAT_2_23_SM3-256.txt'), 'latin1');
    expect(ours).toBe(python('KAT_2_23'));
    // The random message's seed line is the file's own seed, "KAT_2_23" eight times, as the official
    // generator prints it; the first two messages print none.
    const seeds = [...ours.matchAll(/^Msg_Seed = (.*)$/gm)].map((m) => m[1]);
    expect(seeds).toEqual(['', '', Buffer.from('KAT_2_23'.repeat(8)).toString('hex').toUpperCase()]);
  });

  it('KAT_2_12: a partial last byte keeps only its high bits (the DRNG takes any bit count)', () => {
    for (const r of records(kat212).filter((x) => x.bits % 8 !== 0)) {
      expect(r.msg.length, `Msg_Len = ${r.bits}`).toBe(2 * Math.ceil(r.bits / 8));
      const last = Number.parseInt(r.msg.slice(-2), 16);
      expect(last & (0xff >> (r.bits % 8)), `Msg_Len = ${r.bits}`).toBe(0);
    }
    // Not a constant: the messages differ from one length to the next.
    expect(new Set(records(kat212).map((r) => r.msg.slice(0, 2))).size).toBeGreaterThan(200);
  });

  it("KAT_2_12: every whole-byte digest is OpenSSL's SM3 (openssl dgst -sm3)", () => {
    const whole = records(kat212).filter((r) => r.bits % 8 === 0);
    expect(whole).toHaveLength(513);
    // One file per message and one openssl for all of them: it prints "digest *file" per file, in order.
    const dir = tempDir();
    const files = whole.map((r) => {
      const file = join(dir, `msg-${r.bits}`);
      writeFileSync(file, Buffer.from(r.msg, 'hex'));
      return file;
    });
    const out = spawnSync('openssl', ['dgst', '-sm3', '-r', ...files], { encoding: 'utf8' });
    expect(out.status, out.stderr).toBe(0);
    const digests = out.stdout.trim().split('\n');
    expect(digests).toHaveLength(whole.length);
    whole.forEach((r, i) => {
      expect(digests[i], `Msg_Len = ${r.bits}`).toBe(`${r.dst.toLowerCase()} *${files[i]}`);
    });
  });
});

describe('one line per file, the worst of them', () => {
  const sm3 = join(example, 'hash-80', 'src');
  const iccs = join(repoRoot, 'native', 'iccs');
  const candidate = (id: string) =>
    `id: ${id}\ntype: hash\nalgorithm: SM3\ninstances:\n  - { label: SM3-256, dir: ${sm3}, extra_sources: [${join(iccs, 'auxfunc.c')}], include: [${iccs}] }\n`;
  const lines = readFileSync(join(example, 'hash-80', 'kat.sha256'), 'utf8')
    .split('\n')
    .filter((l) => /^[0-9a-f]{64} /.test(l));
  const flip = (line: string) => `${line[0] === '0' ? '1' : '0'}${line.slice(1)}`;

  it('a wrong KAT_2_23 digest is MISMATCH naming that file; a KAT_2_33 the memory limit cannot hold is refused with the reason', async () => {
    const root = tempDir();
    writeFileSync(join(root, 'ngcc-perf.yml'), 'planning:\n  memory_limit_mb: 1024\n');
    for (const id of ['hash-81', 'hash-82']) mkdirSync(join(root, id));
    writeFileSync(join(root, 'hash-81', 'candidate.yml'), candidate('hash-81'));
    writeFileSync(join(root, 'hash-81', 'kat.sha256'), `${lines[0]}\n${flip(lines[1]!)}\n${lines[2]}\n`);
    writeFileSync(join(root, 'hash-82', 'candidate.yml'), candidate('hash-82'));
    const z33 = `${'0'.repeat(64)} strict SM3-256/KAT_2_33_SM3-256.txt`;
    writeFileSync(join(root, 'hash-82', 'kat.sha256'), `${lines[0]}\n${z33}\n`);
    const s = await katOnly(root, tempDir());
    const got = (key: string) => s.instances.find((i) => i.key === key)!;
    expect(got('hash-81/SM3-256').kat).toBe('MISMATCH');
    expect(got('hash-81/SM3-256').detail).toMatch(/^KAT_2_23_SM3-256\.txt: digest [0-9a-f]{64} differs from kat\.sha256 line 2$/);
    expect(got('hash-82/SM3-256').kat).toBe('NOKAT');
    expect(got('hash-82/SM3-256').detail).toMatch(
      /^KAT_2_33_SM3-256\.txt: not run: .*planning\.memory_limit_mb of at least 1536, the campaign allows 1024$/,
    );
  }, 300_000);

  it('statuses and limits', () => {
    expect(worstStatus(['PASS', 'NOKAT', 'PASS'])).toBe('NOKAT');
    expect(worstStatus(['PASS', 'MISMATCH', 'NOKAT'])).toBe('MISMATCH');
    expect(worstStatus(['MISMATCH', 'TIMEOUT', 'PASS'])).toBe('TIMEOUT');
    expect(worstStatus(['PASS', 'PASS'])).toBe('PASS');
    const e = { sha256: '0'.repeat(64), mode: 'strict' as const, label: 'x', file: 'KAT_Loop_x.txt', line: 1 };
    expect(hashKatLimit([{ ...e, records: 1000 }])).toBe(1000);
    expect(hashKatLimit([e])).toBe(0);
  });

  it('`:N` of KAT_2_12 digests the first N Msg_Len records', () => {
    const text = python('KAT_2_12', '12');
    const full = python('KAT_2_12', '30');
    expect(canonicalDigest(full, 'strict', 12)).toBe(canonicalDigest(text, 'strict'));
    expect(canonicalDigest(full, 'strict', 13)).not.toBe(canonicalDigest(text, 'strict'));
  });
});

describe('the digest length of a hash instance', () => {
  const inst = (over: Record<string, unknown>) => instanceSchema.parse({ label: 'X', dir: 'src', ...over });
  it('comes from DIGEST_BIT_LENGTH of CryptHash_AlgorithmInstance.h, or from digest_bits, else names what is missing', () => {
    const root = tempDir();
    mkdirSync(join(root, 'src'));
    expect(digestBitsOf(root, inst({}), 0)).toEqual({
      problem: "candidate.yml instances[0]: no CryptHash_AlgorithmInstance.h in 'src' or its include folders, and no digest_bits",
    });
    writeFileSync(
      join(root, 'src', 'CryptHash_AlgorithmInstance.h'),
      '#define ALGORITHM_INSTANCE "X"\n#define DIGEST_BIT_LENGTH   (768) /* bits */\n',
    );
    expect(digestBitsOf(root, inst({}), 0)).toEqual({ bits: 768 });
    expect(digestBitsOf(root, inst({ digest_bits: 512 }), 0)).toEqual({ bits: 512 });
    writeFileSync(join(root, 'src', 'CryptHash_AlgorithmInstance.h'), '#define DIGEST_BIT_LENGTH 250\n');
    expect(digestBitsOf(root, inst({}), 0)).toEqual({
      problem: 'src/CryptHash_AlgorithmInstance.h: DIGEST_BIT_LENGTH 250 is not a multiple of 8 from 8 to 65536',
    });
  });
});

// A hash's KAT runs fresh messages besides the official ones (its timing job's spot checks are
// test/spot-checks.test.ts's).
describe("a hash's fresh messages, which no table of the official answers passes", () => {
  const dir = tempDir();
  let tools: HarnessTools;
  beforeAll(async () => {
    tools = await harnessTools();
  });
  const kat = async (lib: string) =>
    (await runDriver([tools.driver, lib], ['kat', 'hash:256', 'iccs', 'KAT_2_12', '16'], { timeoutMs: 20_000 })).output;

  it('pass an honest hash', async () => {
    expect((await kat(toyHash(dir, 'honest', ''))).status).toBe('PASS');
  });

  it('KAT_2_12: a fresh message hashed twice must give one digest, and with one flipped bit another: else CRYPTOFAIL', async () => {
    expect(await kat(toyHash(dir, 'counting', 'counting'))).toMatchObject({
      status: 'CRYPTOFAIL',
      statusDetail: 'fresh message 0: two digests of the same 8 bits differ',
    });
    expect(await kat(toyHash(dir, 'blind', 'blind'))).toMatchObject({
      status: 'CRYPTOFAIL',
      statusDetail: 'fresh message 0: one flipped bit gave the same digest',
    });
  });
});
