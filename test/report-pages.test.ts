import { cpSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { sizeAudit } from '../src/catalogs/sizeAudit.js';
import { loadReportModel } from '../src/report/model.js';
import { algorithmPageLabel } from '../src/report/pages/candidate.js';
import { renderPages } from '../src/report/render.js';
import { testData, tempDir } from './helpers/tmp.js';

const goldenData = join(testData, 'golden', 'ngcc-harness-arm_1', 'performance', 'data', 'arm_1');

describe("the algorithm's page link", () => {
  it('is named by the host it points to', () => {
    expect(algorithmPageLabel('https://www.niccs.org.cn/niccs/Round1Additional/pc/content/content_2101561077457833984.html')).toBe(
      'NICCS page',
    );
    expect(algorithmPageLabel('https://csrc.nist.gov/projects/post-quantum-cryptography')).toBe('NIST page');
    expect(algorithmPageLabel('https://nist.gov/pqc')).toBe('NIST page');
    expect(algorithmPageLabel('https://www.example.org/kem')).toBe('example.org');
    // A host that merely ends in the same letters is someone else's.
    expect(algorithmPageLabel('https://notnist.gov/pqc')).toBe('notnist.gov');
  });

  it('says NIST page on a candidate page whose link goes to NIST', () => {
    const model = loadReportModel(goldenData);
    const c = model.candidates.find((x) => x.id === 'kem-09')!;
    c.page = 'https://csrc.nist.gov/projects/pqc-dig-sig';
    const page = renderPages(model).get('kem-09/perf_arm_1.md')!;
    expect(page.split('\n')[2]).toBe(
      '[Performance arm_1](../performance/summary_arm_1.md) › `kem-09` · [method](../performance/method_arm_1.md) · [NIST page](https://csrc.nist.gov/projects/pqc-dig-sig)',
    );
    expect(page).not.toContain('NICCS page');
  });
});

describe('rendering', () => {
  it('reads nothing: the systems of DATA_DIR come with the model', () => {
    const dataDir = tempDir();
    cpSync(goldenData, join(dataDir, 'arm_1'), { recursive: true });
    mkdirSync(join(dataDir, 'x86_1'));
    writeFileSync(join(dataDir, 'x86_1', 'campaign.json'), JSON.stringify({ environment_latest: { architecture: 'x86_64' } }));
    writeFileSync(join(dataDir, 'x86_1', 'build.json'), JSON.stringify({ instances: { 'kem-1/a': {}, 'kem-1/b': {}, 'sign-2/c': {} } }));
    const model = loadReportModel(join(dataDir, 'arm_1'));
    expect(model.systems).toEqual([
      { id: 'arm_1', arch: 'AArch64', candidates: model.candidates.length },
      { id: 'x86_1', arch: 'x86-64', candidates: 2 },
    ]);
    rmSync(dataDir, { recursive: true, force: true });
    const index = renderPages(model).get('index.md')!;
    expect(index).toContain('| x86_1 | x86-64 | 2 | [summary](performance/summary_x86_1.md) · [method](performance/method_x86_1.md) |');
  });
});

describe('the size audit', () => {
  it('judges plain sizes against the catalog', () => {
    const line = 1;
    const findings = sizeAudit(
      [
        { candidate: 'kem-1', label: 'a', sizes: { pk_bytes: 800, ct_bytes: 768 } },
        { candidate: 'sign-2', label: 'b', sizes: { pk_bytes: 1312, signature_bytes: 2420 } },
      ],
      [
        { id: 'kem-1', instance: 'a', pk: 800, ct: 770, basis: 'encoded', line },
        { id: 'sign-2', instance: 'b', sig: 2400, basis: 'nominal-variable', line },
        { id: 'kem-3', instance: 'c', pk: 1, basis: 'encoded', line },
      ],
    );
    expect(findings.map((f) => [f.id, f.item, f.verdict])).toEqual([
      ['kem-1', 'public key', 'match'],
      ['kem-1', 'ciphertext', 'mismatch'],
      ['sign-2', 'signature', 'approximate'],
      ['kem-3', 'public key', 'not measured'],
    ]);
  });
});
