import { beforeAll, describe, expect, it } from 'vitest';
import { harnessTools, type HarnessTools } from '../src/compile/harnessTools.js';
import { planningSchema } from '../src/config/schemas.js';
import { measureOperations } from '../src/measure/operation.js';
import { auditCalls, judgeRepeat, REPEAT_GAP } from '../src/measure/repeatAudit.js';
import { tempDir } from './helpers/tmp.js';
import { VERIFY, variant } from './helpers/toyVariant.js';

/**
 * The repeated-input audit (src/measure/repeatAudit.ts, MLPerf's TEST04): verify's trials reuse 16
 * signed messages; one more process verifies distinct ones, and a verify much faster on the repeated
 * inputs answered them from memory.
 */

/** A verify that keeps its last 64 answers, keyed by the signature's and the message's first bytes. */
const MEMO_VERIFY = `static struct { unsigned char key[64]; int rc, used; } memo[64];
  static unsigned next;
  unsigned char key[64] = {0};
  memcpy(key, sn, sn_len < 32 ? sn_len : 32);
  memcpy(key + 32, m, m_len < 32 ? m_len : 32);
  for (int i = 0; i < 64; i++) if (memo[i].used && memcmp(memo[i].key, key, 64) == 0) return memo[i].rc;
  int rc = honest_sig_verify(pk, pk_len, sn, sn_len, m, m_len);
  unsigned k = next++ % 64;
  memcpy(memo[k].key, key, 64); memo[k].rc = rc; memo[k].used = 1;
  return rc;`;

describe('the repeated-input audit of verify', () => {
  const dir = tempDir();
  let tools: HarnessTools;
  beforeAll(async () => {
    tools = await harnessTools();
  });
  const planning = planningSchema.parse({ trials: 3, trial_target_s: 0.05, op_budget_s: 5, min_measurements: 10, warmups: 1 });
  const verify = (lib: string) =>
    measureOperations([
      {
        driver: tools.driver,
        library: lib,
        libraryShown: 'lib.so',
        type: 'sig',
        operation: 'verify',
        cpu: -1,
        rng: 'iccs-drng',
        sandbox: 'none',
        planning,
      },
    ]).then((r) => r[0]!);

  it('agrees for an honest verify, whose distinct inputs cost about what repeated ones do', async () => {
    const r = await verify(
      variant(dir, 'honest-verify', 'sig', 'sig_verify', VERIFY, 'return honest_sig_verify(pk, pk_len, sn, sn_len, m, m_len);'),
    );
    expect(r.status).toBe('complete');
    expect(r.repeat_audit).toMatchObject({ outcome: 'agrees' });
    expect(r.repeat_audit!.calls).toBeGreaterThanOrEqual(32);
    expect(r.repeat_audit!.ratio).toBeLessThanOrEqual(REPEAT_GAP);
  });

  it('finds a verify that answers repeated inputs from memory: FORGED, though every answer is right', async () => {
    const r = await verify(variant(dir, 'memo-verify', 'sig', 'sig_verify', VERIFY, MEMO_VERIFY));
    expect(r.status).toBe('failed');
    expect(r.forged).toMatch(
      /^FORGED: verify took \d+\.\d× or more as long per call on \d+ distinct inputs as on 16 repeated ones, in each of 3 pairs of processes \(cache effects allow 2×\): it answers repeated inputs from memory$/,
    );
    expect(r.repeat_audit!.ratios).toHaveLength(3);
    expect(r.failure).toBe(r.forged);
    // The replay agreed: the answers are right; only the time tells.
    expect(r.replays!.map((x) => x.outcome)).toEqual(['agrees']);
    expect(r.repeat_audit!.ratio).toBeGreaterThan(REPEAT_GAP);
  });

  it('sizes its pool to the signing budget, and says why when it cannot', () => {
    const meta = (entries: number, signS: number) =>
      [{ meta: { verify_pool: String(entries), verify_pool_sign_s: String(signS) } }] as never;
    // 16 signatures in 0.016 s: 1 ms each, 1 s of budget buys 1000 of them.
    expect(auditCalls({ complete: meta(16, 0.016), iterations: 5000, signBudgetS: 1 })).toBe(1000);
    expect(auditCalls({ complete: meta(16, 0.016), iterations: 200, signBudgetS: 1 })).toBe(200);
    expect(auditCalls({ complete: meta(16, 0.00001), iterations: 1e6, signBudgetS: 1 })).toBe(4096);
    // SPHINCS+-256s: about 0.5 s a signature.
    expect(auditCalls({ complete: meta(16, 8), iterations: 600, signBudgetS: 1 })).toBe(
      'signing 32 distinct inputs would take 16.0 s, over the 1 s a trial is planned for',
    );
    expect(auditCalls({ complete: meta(16, 0.016), iterations: 10, signBudgetS: 1 })).toMatch(/^a trial makes 10 calls, fewer than the 32/);
    expect(judgeRepeat(1000, 1900, 500).outcome).toBe('agrees');
    expect(judgeRepeat(1000, 2100, 500).outcome).toBe('differs');
  });
});
