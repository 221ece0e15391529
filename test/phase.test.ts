import { appendFileSync, existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { PHASE_STEPS, runCampaign, type CampaignOptions, type CampaignSummary, type PhaseStep } from '../src/campaign/runCampaign.js';
import type { Progress } from '../src/campaign/progress.js';
import type { BuildJson } from '../src/evidence/fileTypes.js';
import { validateDataset } from '../src/evidence/validate.js';
import { filesUnder, writeJsonAtomic } from '../src/util/fsx.js';
import { fixtureCampaign, QUICK } from './helpers/campaigns.js';
import { tempDir } from './helpers/tmp.js';

/**
 * A phase defined here alone: one file per instance, `<systemDir>/noop/<id>/<label>.json`, naming
 * what the prepare step established. It touches no other phase's code or evidence.
 */
const noopPath = (systemDir: string, id: string, label: string) => join(systemDir, 'noop', id, `${label}.json`);
const noopPhase: PhaseStep = {
  name: 'noop',
  ticks: () => 1,
  async run(ctx) {
    const { candidate, instance } = ctx.unit;
    writeJsonAtomic(noopPath(ctx.run.plan.systemDir, candidate.id, instance.label), {
      key: ctx.unit.key,
      kat: ctx.entry?.kat ?? null,
      library_sha256: ctx.entry?.library_sha256 ?? null,
    });
    ctx.tick('noop: written');
  },
};

/** A progress sink that remembers the total announced and every line. */
function recorder(): Progress & { total: number; lines: string[] } {
  const r = {
    total: -1,
    lines: [] as string[],
    start: (n: number) => {
      r.total = n;
    },
    tick: (m: string) => {
      r.lines.push(m);
    },
    done: () => undefined,
  };
  return r;
}

const INSTANCES = [
  ['kem-1', 'good'],
  ['kem-1', 'buildfail'],
  ['sign-1', 'toy-sig'],
] as const;

describe('a phase added to the run', () => {
  const root = fixtureCampaign(['kem-1', 'sign-1'], QUICK);
  const [withNoop, without] = [tempDir(), tempDir()];
  const progress = recorder();
  let summary: CampaignSummary;

  beforeAll(async () => {
    const opts = (dataDir: string): CampaignOptions => ({
      campaignDir: root,
      system: 's',
      dataDir,
      only: /^(kem-1\/(good|buildfail)|sign-1\/toy-sig)$/,
      phases: new Set(['build', 'kat', 'measure']),
    });
    // The one line that wires the phase in.
    summary = await runCampaign({ ...opts(withNoop), progress }, [...PHASE_STEPS, noopPhase]);
    await runCampaign(opts(without));
  });

  it('writes one file per instance, after the prepare step', () => {
    const sys = join(withNoop, 's');
    expect(filesUnder(sys, 'noop')).toEqual(['noop/kem-1/buildfail.json', 'noop/kem-1/good.json', 'noop/sign-1/toy-sig.json']);
    const build = JSON.parse(readFileSync(join(sys, 'build.json'), 'utf8')) as BuildJson;
    for (const [id, label] of INSTANCES) {
      const written = JSON.parse(readFileSync(noopPath(sys, id, label), 'utf8')) as {
        key: string;
        kat: string;
        library_sha256: string | null;
      };
      const entry = build.instances[`${id}/${label}`]!;
      expect(written).toEqual({ key: `${id}/${label}`, kat: entry.kat, library_sha256: entry.library_sha256 ?? null });
    }
  });

  it('counts its progress lines with the others', () => {
    expect(progress.lines).toHaveLength(progress.total);
    expect(progress.lines.filter((l) => l.endsWith(' noop: written'))).toEqual(
      INSTANCES.map(([id, label]) => `${id}/${label} noop: written`),
    );
  });

  it("leaves the other phases' evidence as a run without it writes it", () => {
    const [a, b] = [join(withNoop, 's'), join(without, 's')];
    // The same files, the noop folder aside.
    expect(filesUnder(a).filter((f) => !f.startsWith('noop/'))).toEqual(filesUnder(b));
    const entries = (dir: string) => (JSON.parse(readFileSync(join(dir, 'build.json'), 'utf8')) as BuildJson).instances;
    const [ea, eb] = [entries(a), entries(b)];
    expect(Object.keys(ea)).toEqual(INSTANCES.map(([id, label]) => `${id}/${label}`));
    expect(Object.keys(ea)).toEqual(Object.keys(eb));
    for (const key of Object.keys(ea)) {
      expect(Object.keys(ea[key]!), key).toEqual(Object.keys(eb[key]!));
      expect(ea[key]!.kat, key).toBe(eb[key]!.kat);
      expect(ea[key]!.library_sha256, key).toBe(eb[key]!.library_sha256);
    }
    expect(summary.instances.map((i) => [i.key, i.kat])).toEqual([
      ['kem-1/good', 'PASS'],
      ['kem-1/buildfail', 'BUILDFAIL'],
      ['sign-1/toy-sig', 'PASS'],
    ]);
    // Records of the measured instances, none of the failed one.
    for (const op of ['keygen', 'enc', 'dec']) {
      expect(existsSync(join(a, 'records', 'kem-1', `good__${op}.json`)), op).toBe(true);
      expect(existsSync(join(a, 'records', 'kem-1', `buildfail__${op}.json`)), op).toBe(false);
    }
    for (const op of ['keygen', 'sign', 'verify']) expect(existsSync(join(a, 'records', 'sign-1', `toy-sig__${op}.json`)), op).toBe(true);
    expect(validateDataset(a)).toEqual([]);
  });
});

describe('a library replaced between its KAT and its timing', () => {
  it('is not timed nor profiled: the measure step names the change, and no record is written', async () => {
    const root = fixtureCampaign(['kem-1'], QUICK);
    const data = tempDir();
    // Another process's write, played by a step between the KAT and the timing.
    const replace: PhaseStep = {
      name: 'replace',
      ticks: () => 0,
      async run(ctx) {
        const library = join(ctx.run.plan.campaignDir, ctx.entry!.library!);
        appendFileSync(library, Buffer.from([0]));
      },
    };
    const steps = [...PHASE_STEPS.slice(0, 2), replace, ...PHASE_STEPS.slice(2)];
    expect(PHASE_STEPS.slice(0, 2).map((s) => s.name)).toEqual(['prepare', 'stale']);
    const progress = recorder();
    const s = await runCampaign(
      {
        campaignDir: root,
        system: 's',
        dataDir: data,
        only: /^kem-1\/good$/,
        phases: new Set(['build', 'kat', 'measure', 'profile']),
        progress,
      },
      steps,
    );
    expect(s.instances[0]!.kat).toBe('PASS');
    expect(s.instances[0]!.operations.map((o) => [o.operation, o.status])).toEqual([
      ['keygen', 'failed'],
      ['enc', 'failed'],
      ['dec', 'failed'],
    ]);
    expect(s.instances[0]!.operations[0]!.failure).toMatch(
      /^the library .*libgood\.so changed since its build and KAT \(sha256 [0-9a-f]{12}…, built [0-9a-f]{12}…\)$/,
    );
    expect(progress.lines.at(-1)).toMatch(/^kem-1\/good profile: not run \(the library .* changed since its build/);
    expect(filesUnder(join(data, 's'), 'records')).toEqual([]);
    expect(filesUnder(join(data, 's'), 'profile')).toEqual([]);
  });
});
