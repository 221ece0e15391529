import { cpSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { runCampaign, type Phase } from '../src/campaign/runCampaign.js';
import { compareEvidence } from '../src/compare/compare.js';
import { failReasons, parseFailOn } from '../src/compare/failOn.js';
import { renderComparison } from '../src/compare/markdown.js';
import type { CtEvidence, CtFinding } from '../src/ct/findingKinds.js';
import { evidencePaths } from '../src/evidence/layout.js';
import { KYBER_REF, kyberCandidate, lineOf, preFixKyber } from './helpers/kyberslash.js';
import { tempDir } from './helpers/tmp.js';

/**
 * KyberSlash (docs/method.md#constant-time-check): pq-crystals Kyber's reference as published, and
 * the same code with the lines its 2024 fix replaced restored from the comments it left. gcc 12
 * emits `div` for those divisions by q at -Os (the guide's resource flag set) and a multiplication
 * at -O2. The quotient flows only into output bits, where memcheck reports nothing: the division
 * check reads the operands at the instruction. A base of the fixed code and a head of the pre-fix
 * code make the pull request that brings a division back.
 */
const SYSTEM = 'x86_ks';
const BUILDS = [
  { label: 'kyber512-os', cflags: '-Os' },
  { label: 'kyber512-o2', cflags: '-O2' },
];

function campaign(preFix: boolean): string {
  const root = tempDir();
  const folder = join(root, 'kem-1');
  mkdirSync(folder, { recursive: true });
  // The fixed code is the published folder as it is.
  if (preFix) preFixKyber(join(folder, 'ref'));
  else cpSync(KYBER_REF, join(folder, 'ref'), { recursive: true });
  kyberCandidate(folder, 'ref', BUILDS);
  // The instances' own flag sets are the subject: no other build (test/ct-builds.test.ts has those).
  writeFileSync(join(root, 'ngcc-perf.yml'), 'ct:\n  enabled: true\n  variants: []\n');
  return root;
}

const phases = new Set<Phase>(['build', 'ct']);
const readCt = (dataDir: string, label: string): CtEvidence =>
  JSON.parse(readFileSync(evidencePaths(join(dataDir, SYSTEM)).ct('kem-1', label), 'utf8')) as CtEvidence;
const divisions = (f: CtFinding[]) => f.filter((x) => x.kind === 'division');

describe('KyberSlash: a secret division is a finding by itself', () => {
  const base = { campaign: campaign(false), data: tempDir() };
  const head = { campaign: campaign(true), data: tempDir() };
  const ref = join(head.campaign, 'kem-1', 'ref');

  beforeAll(async () => {
    await runCampaign({ campaignDir: base.campaign, system: SYSTEM, dataDir: base.data, phases });
    await runCampaign({ campaignDir: head.campaign, system: SYSTEM, dataDir: head.data, phases });
  }, 600_000);

  it('pre-fix at -Os: dec divides in poly_tomsg, enc in poly_compress and polyvec_compress, each a finding with its secret dividend', () => {
    const ct = readCt(head.data, 'kyber512-os');
    expect(ct.flags).toContain('-Os');
    expect(ct.compiler).toMatch(/gcc/);
    const at = (f: CtFinding) => `${f.function.replace(/^pqcrystals_kyber512_ref_/, '')} ${f.file}:${f.line}`;
    const tomsg = `poly_tomsg poly.c:${lineOf(ref, 'poly.c', '(((t << 1) + KYBER_Q/2)/KYBER_Q) & 1')}`;
    const compress = `poly_compress poly.c:${lineOf(ref, 'poly.c', '<< 4) + KYBER_Q/2)/KYBER_Q) & 15')}`;
    const vecCompress = `polyvec_compress polyvec.c:${lineOf(ref, 'polyvec.c', '<< 10) + KYBER_Q/2)/ KYBER_Q) & 0x3ff')}`;
    const dec = divisions(ct.operations.dec!.findings);
    const enc = divisions(ct.operations.enc!.findings);
    expect(dec.map(at)).toContain(tomsg);
    // dec re-encrypts: the compressions are its findings too.
    expect(dec.map(at)).toEqual(expect.arrayContaining([compress, vecCompress]));
    expect(enc.map(at).sort()).toEqual([compress, vecCompress].sort());
    expect(ct.operations.enc!.status).toBe('flagged');
    for (const f of [...dec, ...enc]) {
      expect(f.instruction).toMatch(/^i?div/);
      expect(f.secret_operands).toEqual(['dividend']);
    }
    expect(divisions(ct.operations.keygen!.findings)).toEqual([]);
    // fips202's division by the rate is reached in every operation, on public lengths: listed, never a finding.
    const shake = ct.divisions!.filter((d) => d.file === 'fips202.c');
    expect(shake.length).toBeGreaterThan(0);
    expect(shake.every((d) => !d.tainted)).toBe(true);
    expect(ct.operations.dec!.division_check).toMatchObject({ sites: expect.any(Array) });
  });

  it('pre-fix at -O2, and the fixed code at -Os and at -O2: no division finding', () => {
    for (const [data, label] of [
      [head.data, 'kyber512-o2'],
      [base.data, 'kyber512-os'],
      [base.data, 'kyber512-o2'],
    ] as const) {
      const ct = readCt(data, label);
      for (const [op, o] of Object.entries(ct.operations)) expect(divisions(o.findings), `${label} ${op}`).toEqual([]);
    }
    // At -Os the fixed code still divides in fips202, publicly: the check read it there.
    const fixed = readCt(base.data, 'kyber512-os');
    const check = fixed.operations.enc!.division_check;
    expect(check && 'sites' in check && check.sites.some((s) => s.hits > 0 && s.secret.length === 0)).toBe(true);
  });

  it('the pull request that brings the divisions back gets them in its comment, and fail-on: ct fails it', () => {
    const report = compareEvidence({ baseDir: base.data, headDir: head.data, system: SYSTEM });
    const found = (report.ct_findings ?? []).filter((f) => f.kind === 'division');
    expect(found.map((f) => f.function)).toEqual(expect.arrayContaining(['pqcrystals_kyber512_ref_poly_tomsg']));
    expect(found.every((f) => f.key === 'kem-1/kyber512-os')).toBe(true);
    expect(failReasons(report, parseFailOn('ct', 'fail-on'))).toEqual([expect.stringMatching(/new constant-time finding/)]);
    expect(failReasons(report, parseFailOn('regression,kat', 'fail-on'))).toEqual([]);
    expect(renderComparison(report)).toMatch(/division[^\n]*poly_tomsg|poly_tomsg[^\n]*division/);
  });
});
