import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildArgv, flagsFor } from '../src/compile/compile.js';
import { guideFlags, hostArch } from '../src/compile/flags.js';
import { instanceFlags, nistShim } from '../src/compile/nistShim.js';
import { loadCandidate } from '../src/config/campaign.js';
import { runCli } from './helpers/cli.js';
import { buildRequestFor } from './helpers/build.js';
import { fixtureCampaign, goodKemCampaign, QUICK } from './helpers/campaigns.js';
import { tempDir } from './helpers/tmp.js';

const root = tempDir();
let n = 0;

/** Loads a candidate.yml whose first instance has the given extra lines (indented under it). */
function load(instanceLines: string[], head: string[] = ['api: nist']): ReturnType<typeof loadCandidate> {
  const id = `kem-${++n}`;
  const dir = join(root, id);
  mkdirSync(join(dir, 'src'), { recursive: true });
  const yml = [
    `id: ${id}`,
    'type: kem',
    'algorithm: Example',
    ...head,
    'instances:',
    '  - label: ex-1',
    '    dir: src',
    ...instanceLines.map((l) => `    ${l}`),
  ];
  writeFileSync(join(dir, 'candidate.yml'), `${yml.join('\n')}\n`);
  return loadCandidate(dir, `${id}/candidate.yml`);
}

/** The one-line error of a bad manifest, without the file name (checked once below). */
function problem(instanceLines: string[], head?: string[]): string {
  try {
    load(instanceLines, head);
  } catch (e) {
    const message = (e as Error).message;
    expect(message).toMatch(new RegExp(`^kem-${n}/candidate\\.yml: `));
    return message.replace(/^kem-\d+\/candidate\.yml: /, '');
  }
  throw new Error('the manifest loaded');
}

const KYBER_NAMES = [
  'nist_names:',
  '  keypair: pqcrystals_kyber768_ref_keypair',
  '  enc: pqcrystals_kyber768_ref_enc',
  '  dec: pqcrystals_kyber768_ref_dec',
  '  pk_bytes: KYBER_PUBLICKEYBYTES',
  '  sk_bytes: KYBER_SECRETKEYBYTES',
  '  ct_bytes: KYBER_CIPHERTEXTBYTES',
  '  ss_bytes: 32',
];

describe('defines and cflags', () => {
  it('become compiler arguments in order: cflags, then each define as -D (map or list)', () => {
    const map = load(['defines: {KYBER_K: 3, NDEBUG: null, NAME: "kyber768"}', 'cflags: [-O3, -fno-strict-aliasing]']);
    expect(instanceFlags(map.instances[0]!)).toEqual(['-O3', '-fno-strict-aliasing', '-DKYBER_K=3', '-DNDEBUG', '-DNAME=kyber768']);
    const list = load(['defines: [KYBER_K=3, NDEBUG]']);
    expect(instanceFlags(list.instances[0]!)).toEqual(['-DKYBER_K=3', '-DNDEBUG']);
    expect(instanceFlags(load([]).instances[0]!)).toEqual([]);
  });

  it("come after the guide's flags for the host and the harness's additions; the library links -shared, --no-undefined, exporting only the API", async () => {
    const root = goodKemCampaign(['good'], QUICK);
    const yml = join(root, 'kem-1', 'candidate.yml');
    writeFileSync(
      yml,
      readFileSync(yml, 'utf8').replace('    dir: good\n', '    dir: good\n    cflags: [-fwrapv]\n    defines: [TOY_DEFINE=1]\n'),
    );
    const c = loadCandidate(join(root, 'kem-1'), 'kem-1/candidate.yml');
    const req = buildRequestFor(c, 0, { sandbox: 'none' });
    const library = join(req.outDir, 'guide', 'libgood.so');
    const { argv } = await buildArgv(req, flagsFor(req), library);
    const guide = guideFlags(hostArch(), 'reference');
    if (hostArch() !== 'other') expect(guide.slice(0, 4)).toEqual(['-std=c99', '-Wpedantic', '-Wall', '-Wextra']);
    expect(guide).toContain('-O2');
    expect(guide.slice(-2)).toEqual(['-fPIC', '-D_GNU_SOURCE']);
    expect(argv.slice(1, guide.length + 3)).toEqual([...guide, '-fwrapv', '-DTOY_DEFINE=1']);
    const script = join(req.outDir, 'guide', 'exports.map');
    expect(argv.slice(argv.indexOf('-shared'), argv.indexOf('-o'))).toEqual([
      '-shared',
      '-Wl,--no-undefined',
      `-Wl,--version-script=${script}`,
    ]);
    const exported = readFileSync(script, 'utf8');
    expect(exported).toMatch(/global:\n(\s+[\w*]+;\n)+\s+local: \*;/);
    expect(exported).toContain('    kem_*;');
  });

  it.each([
    ['defines: {"KYBER K": 3}', /^line 8: instances\[0\]\.defines\.KYBER K: a macro name must be a C identifier$/],
    [
      'defines: ["KYBER_K=3; rm -rf ~"]',
      /line 8: instances\[0\]\.defines\[0\]: 'KYBER_K=3; rm -rf ~': a macro value is printable ASCII without spaces/,
    ],
    [
      'defines: {NGCC_NIST_PREFIX: evil_}',
      /^line 8: instances\[0\]\.defines\.NGCC_NIST_PREFIX: names starting with NGCC_ are the harness’s own$/,
    ],
    ['defines: {KYBER_K: [3]}', /^line 8: instances\[0\]\.defines\.KYBER_K: a macro value is a string or a number/],
    ['defines: KYBER_K=3', /^line 8: instances\[0\]\.defines: a map \{NAME: value\} or a list \[NAME=value, NAME\]$/],
    ['defines: ["-DKYBER_K=3"]', /instances\[0\]\.defines\[0\]: '-DKYBER_K=3': a macro name must be a C identifier/],
  ])('%s is refused, naming the line and the field', (line, message) => {
    expect(problem([line])).toMatch(message);
  });

  it.each([
    ['-o', 'is not an allowed option'],
    ['-o/tmp/x.so', 'is not an allowed option'],
    ['-fplugin=./evil.so', 'loads a compiler plugin'],
    ['-specs=evil.specs', 'is not an allowed option'],
    ['-wrapper', 'is not an allowed option'],
    ['-B/tmp/evil', 'is not an allowed option'],
    ['-Wl,--output=/tmp/x', 'passes options to the linker, assembler or preprocessor'],
    ['-Wp,-MD,/tmp/deps', 'passes options to the linker, assembler or preprocessor'],
    ['-fdump-tree-all', 'writes files beside the library'],
    ['-fprofile-generate', 'reads or writes profile files'],
    ['-fuse-ld=/tmp/ld', 'selects another linker'],
    // gcc splits this one at spaces into the options of a second run: -wrapper would start any program.
    ['-fcompare-debug=-wrapper /bin/sh,spin.sh', 'hands options to a second compiler run'],
    ['-fcompare-debug=-fplugin=/x.so', 'hands options to a second compiler run'],
    ['-fcompare-debug-second', 'hands options to a second compiler run'],
    ['-foffload=nvptx-none', 'starts other programs'],
    ['-fmodule-mapper=|sh mm.sh', 'starts other programs'],
    ['-fmodules-ts', 'starts other programs'],
    ['-O2 -g', 'holds a space: one option per entry'],
    ['-include/etc/passwd', 'names files or folders: use include, extra_sources or libs'],
    ['-I/', 'names files or folders: use include, extra_sources or libs'],
    ['-DKYBER_K=3', 'defines a macro: put it under defines'],
    ['@args.txt', 'is not an option'],
    ['O3', 'is not an option'],
  ])('cflags: [%s] is refused with the reason', (flag, why) => {
    expect(problem([`cflags: ["${flag}"]`])).toMatch(`line 8: instances[0].cflags[0]: '${flag}' ${why}`);
  });

  it('allows the options that change how code compiles', () => {
    const flags = [
      '-O3',
      '-Os',
      '-march=native',
      '-mavx2',
      '-fno-lto',
      '-fwrapv',
      '-Wno-unused',
      '-w',
      '-std=gnu11',
      '-g',
      '-pedantic',
      '-pthread',
    ];
    expect(load([`cflags: [${flags.join(', ')}]`]).instances[0]!.cflags).toEqual(flags);
  });
});

describe('nist_names', () => {
  it('tells the shim the names and makes the KAT driver use the shim’s exports', () => {
    const c = load(['defines: {KYBER_K: 3}', ...KYBER_NAMES]);
    const { defines } = nistShim(c, c.instances[0]!);
    expect(defines).toEqual([
      '-DNGCC_NIST_PREFIX=ngcc_nist_',
      '-DNGCC_NIST_KEM',
      '-DNGCC_NIST_NAMES',
      '-DNGCC_NIST_HEADER_1="api.h"',
      '-DNGCC_NIST_KEYPAIR=pqcrystals_kyber768_ref_keypair',
      '-DNGCC_NIST_ENC=pqcrystals_kyber768_ref_enc',
      '-DNGCC_NIST_DEC=pqcrystals_kyber768_ref_dec',
      '-DNGCC_NIST_PK_BYTES=KYBER_PUBLICKEYBYTES',
      '-DNGCC_NIST_SK_BYTES=KYBER_SECRETKEYBYTES',
      '-DNGCC_NIST_CT_BYTES=KYBER_CIPHERTEXTBYTES',
      '-DNGCC_NIST_SS_BYTES=32',
    ]);
  });

  it.each([
    [[], KYBER_NAMES, /^line 7: instances\[0\]\.nist_names: only allowed with api: nist$/],
    [['api: nist'], [...KYBER_NAMES, 'nist_prefix: PQCLEAN_X_'], /instances\[0\]\.nist_names: set nist_prefix or nist_names, not both/],
    [['api: nist'], KYBER_NAMES.filter((l) => !/dec|ss_bytes/.test(l)), /instances\[0\]\.nist_names: a kem needs dec, ss_bytes$/],
    [['api: nist'], [...KYBER_NAMES, '  sig_bytes: 2420'], /instances\[0\]\.nist_names: sig_bytes: not used by a kem$/],
    [['api: nist'], [...KYBER_NAMES, '  keygen: x'], /line \d+: instances\[0\]\.nist_names\.keygen: unknown key 'keygen'/],
    [
      ['api: nist'],
      KYBER_NAMES.map((l) => l.replace('_ref_enc', '_ref_enc()')),
      /^line 10: instances\[0\]\.nist_names\.enc: a C function name$/,
    ],
    [['api: nist'], [...KYBER_NAMES, '  headers: [../../etc/x.h]'], /instances\[0\]\.nist_names\.headers\[0\]: must not climb out/],
    [
      ['api: nist'],
      [...KYBER_NAMES, '  headers: [/usr/include/stdio.h]'],
      /instances\[0\]\.nist_names\.headers\[0\]: a header name relative/,
    ],
    [['api: nist'], [...KYBER_NAMES, '  headers: [a.h, b.h, c.h, d.h, e.h]'], /instances\[0\]\.nist_names\.headers/],
  ])('%j %j is refused, naming the field', (head, lines, message) => {
    expect(problem(lines, head)).toMatch(message);
  });
});

describe('kat_rng: hqc', () => {
  it('is a NIST-API generator: refused with api: iccs', () => {
    expect(problem([], ['kat_rng: hqc'])).toBe('line 4: kat_rng: hqc is a NIST-API generator: only allowed with api: nist');
    expect(load([], ['api: nist', 'kat_rng: hqc']).katRng).toBe('hqc');
  });
});

describe('on the command line', () => {
  it('a bad cflags entry makes the candidate INVALID with the file, line and field; no stack trace', async () => {
    const campaign = fixtureCampaign(['kem-1'], QUICK);
    const yml = join(campaign, 'kem-1', 'candidate.yml');
    writeFileSync(yml, readFileSync(yml, 'utf8').replace(/(\n {4}dir: [^\n]*)/, '$1\n    cflags: [-fplugin=./x.so]'));
    const r = await runCli(['run', campaign, '--system', 's', '--out', join(tempDir(), 'data'), '--phases', 'build']);
    expect(r.code).toBe(1);
    expect(r.out.find((l) => l.startsWith('INVALID '))).toMatch(
      /^INVALID {5}kem-1 — .*kem-1\/candidate\.yml: line \d+: instances\[0\]\.cflags\[0\]: '-fplugin=\.\/x\.so' loads a compiler plugin$/,
    );
    expect(`${r.err.join('\n')}${r.progress}`).not.toMatch(/\n\s+at /);
  });

  it('a source that is not C or assembly makes the candidate INVALID, naming it: another compiler would run', async () => {
    const campaign = fixtureCampaign(['kem-1'], QUICK);
    const yml = join(campaign, 'kem-1', 'candidate.yml');
    const text = readFileSync(yml, 'utf8');
    const dir = /\n {4}dir: ([^\n]*)/.exec(text)![1]!.trim();
    writeFileSync(join(campaign, 'kem-1', dir, 'mapper.cpp'), 'int f(void) { return 0; }\n');
    writeFileSync(yml, text.replace('extra_sources: [', 'extra_sources: [mapper.cpp, '));
    const r = await runCli(['run', campaign, '--system', 's', '--out', join(tempDir(), 'data'), '--phases', 'build']);
    expect(r.code).toBe(1);
    expect(r.out.find((l) => l.startsWith('INVALID '))).toMatch(
      /kem-1\/candidate\.yml: line \d+: instances\[0\]\.extra_sources: 'mapper\.cpp' is not a C or assembly source \(\.c, \.s, \.S\)$/,
    );
  });
});
