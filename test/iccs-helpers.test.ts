import { createHash, createHmac, randomBytes } from 'node:crypto';
import { execFileSync, spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { nativeManifest, nativePath } from '../src/compile/harnessTools.js';
import { repoRoot, tempDir } from './helpers/tmp.js';

// SM3 as OpenSSL implements it (node's crypto is OpenSSL 3): an independent reference.
const sm3 = (data: Uint8Array) => createHash('sm3').update(data).digest();

function kdf(msg: Buffer, bytes: number): Buffer {
  const out: Buffer[] = [];
  for (let i = 1; out.length * 32 < bytes; i++) {
    const ctr = Buffer.alloc(4);
    ctr.writeUInt32BE(i);
    out.push(sm3(Buffer.concat([msg, ctr])));
  }
  return Buffer.concat(out).subarray(0, bytes);
}

function pseudohash(msg: Buffer, bits: number): Buffer {
  const key = sm3(Buffer.from('ICCS pseudohash key'));
  const blocks: Buffer[] = [];
  for (let i = 1; i <= bits / 256; i++) {
    const ctr = Buffer.alloc(4);
    ctr.writeUInt32BE(i);
    blocks.push(
      createHmac('sm3', key)
        .update(Buffer.concat([msg, ctr]))
        .digest(),
    );
  }
  return Buffer.concat(blocks);
}

describe('ICCS helper library (native/iccs) against OpenSSL', () => {
  let tool: string;
  beforeAll(() => {
    const dir = tempDir();
    tool = join(dir, 'sm3_check');
    const src = join(repoRoot, 'native', 'iccs');
    execFileSync('gcc', [
      '-std=c99',
      '-Wpedantic',
      '-Wall',
      '-Wextra',
      '-Werror',
      '-O2',
      `-I${src}`,
      '-o',
      tool,
      // sm3_check.c with the helpers: native/binaries.json.
      ...nativeManifest().other.sm3_check!.sources.map(nativePath),
    ]);
  });
  const run = (input: Buffer, args: string[] = []) => {
    const r = spawnSync(tool, args, { input });
    expect(r.status).toBe(0);
    return r.stdout.toString().trim();
  };

  it('SM3("abc") is the published test vector', () => {
    expect(run(Buffer.from('abc'))).toBe('66c7f0f462eeedd9d1f2d46bdc10e4e24167c4875cf2f7a2297da02b8f4ba8e0');
  });

  it('sm3hash equals OpenSSL SM3 on messages of every length across block boundaries', () => {
    for (const len of [0, 1, 55, 56, 63, 64, 65, 119, 120, 128, 1000, 1 << 20]) {
      const msg = randomBytes(len);
      expect(run(msg), `length ${len}`).toBe(sm3(msg).toString('hex'));
    }
  });

  it('pseudoXOF is the SM2 KDF over SM3', () => {
    for (const [len, out] of [
      [0, 1],
      [32, 32],
      [33, 100],
      [200, 1000],
    ] as const) {
      const msg = randomBytes(len);
      expect(run(msg, ['xof', String(out)])).toBe(kdf(msg, out).toString('hex'));
    }
  });

  it('pseudohash is the documented HMAC-SM3 cascade', () => {
    for (const bits of [512, 768, 1024]) {
      const msg = randomBytes(77);
      expect(run(msg, ['ph', String(bits)])).toBe(pseudohash(msg, bits).toString('hex'));
    }
  });
});
