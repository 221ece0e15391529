import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { main } from '../src/cliMain.js';
import type { BuildJson, TimingRecord } from '../src/evidence/types.js';
import type { Plan } from '../src/measure/plan.js';
import type { TrialProcess } from '../src/measure/trial.js';
import type { HashProfile, MemoryRecord } from '../src/profile/types.js';
import { validateDataset } from '../src/evidence/validate.js';
import { tempDir } from './helpers/tmp.js';

// Libraries that attack the drivers' results (test/fixtures/README.md, "hostile/"), run as a campaign
// beside an honest neighbour, every phase included: none of them may turn its own lines into evidence.
const campaign = join(import.meta.dirname, 'fixtures', 'hostile');
const CANARY = 'NGCC-CANARY';
const OPS = ['keygen', 'enc', 'dec'] as const;

describe('results the measured library cannot write', () => {
  const data = tempDir();
  const sys = join(data, 'hx');
  const pages = tempDir();
  let exitCode: number;
  let build: BuildJson;
  const json = <T>(...path: string[]) => JSON.parse(readFileSync(join(sys, ...path), 'utf8')) as T;
  // A timing record with the fields these tests read typed.
  type Timing = TimingRecord & { plan?: Plan; processes: TrialProcess[]; failure?: string };
  const record = (label: string, op: string) => json<Timing>('records', 'kem-66', `${label}__${op}.json`);
  const memory = (label: string, op: string) => json<MemoryRecord>('memory', 'kem-66', `${label}__${op}.json`);
  const profile = (label: string, op: string) => json<HashProfile>('profile', 'kem-66', `${label}__${op}.json`);
  const kat = (label: string) => build.instances[`kem-66/${label}`]!;
  const measured = (label: string) => existsSync(join(sys, 'records', 'kem-66', `${label}__keygen.json`));

  beforeAll(async () => {
    exitCode = await main(['run', campaign, '--system', 'hx', '--out', data]);
    build = json<BuildJson>('build.json');
    await main(['report', sys, '--campaign', campaign, '--out', pages]);
  }, 300_000);

  it('exits 1 (some instances failed) and the honest neighbour is measured complete in every phase', () => {
    expect(exitCode).toBe(1);
    expect(kat('honest').kat).toBe('PASS');
    for (const op of OPS) {
      expect(record('honest', op).status).toBe('complete');
      expect(record('honest', op).trials).toHaveLength(2);
      expect(memory('honest', op).status).toBe('complete');
      expect(profile('honest', op).status).toBe('complete');
    }
  });

  it('forge-trial: a TRIAL line printed by kem_keygen is not a trial; the record holds the driver trials only', () => {
    expect(kat('forge-trial').kat).toBe('PASS');
    const r = record('forge-trial', 'keygen');
    expect(r.status).toBe('complete');
    expect(r.trials).toHaveLength(r.plan!.trials);
    for (const t of r.trials) {
      expect(t.measurements).toBe(r.plan!.iterations_per_trial);
      expect(t.cycles).not.toBe(12);
      expect(t.cycles / t.measurements).toBeGreaterThan(100);
    }
  });

  it('forge-exit: a forged result followed by exit(0) is "the driver did not finish", in every phase', () => {
    expect(kat('forge-exit').kat).toBe('PASS'); // it cheats only when measured
    const unfinished = "the driver did not finish: the process exited with code 0 before the driver's end line";
    for (const op of OPS) {
      const r = record('forge-exit', op);
      expect(r.status).toBe('failed');
      expect(r.failure).toBe(`calibration: ${unfinished}`);
      expect(r.trials).toEqual([]);
      expect(r.processes.flatMap((p) => p.trials)).toEqual([]);
      const m = memory('forge-exit', op);
      expect([m.status, m.failure, m.stack_bytes, m.vmhwm_bytes]).toEqual(['failed', unfinished, null, null]);
      const p = profile('forge-exit', op);
      expect([p.status, p.failure, p.total]).toEqual(['failed', unfinished, { operations: 0, ticks: 0 }]);
    }
  });

  it('forge-pass: "STATUS PASS" then exit(0) in the KAT is CRASH, and the instance is never measured', () => {
    expect(kat('forge-pass').kat).toBe('CRASH');
    expect(kat('forge-pass').kat_detail).toBe(
      "the driver did not finish: the process ended before the KAT was complete (the process exited with code 0 before the driver's end line)",
    );
    expect(measured('forge-pass')).toBe(false);
    expect(existsSync(join(sys, 'kat', 'kem-66', 'forge-pass', '.kat-output.partial'))).toBe(false);
  });

  it('forge-channel: lines written on the result channel without the secret void the run', () => {
    expect(kat('forge-channel').kat).toBe('CRASH');
    // STATUS PASS, TRIAL, STATUS complete and END 0: four forged lines.
    expect(kat('forge-channel').kat_detail).toBe(
      "the driver did not finish: the process ended before the KAT was complete (4 lines without the run's secret on the result channel)",
    );
    expect(measured('forge-channel')).toBe(false);
  });

  it('forge-meta: META lines printed by a constructor change nothing: the counter is the driver one', async () => {
    expect(kat('forge-meta').kat).toBe('PASS');
    const honest = record('honest', 'keygen');
    for (const op of OPS) {
      const r = record('forge-meta', op);
      expect(r.status).toBe('complete');
      expect(r.counter).toEqual(honest.counter);
      expect(r.processes.every((p) => p.meta.counter === honest.processes[0]!.meta.counter && p.meta.canary === undefined)).toBe(true);
      expect(profile('forge-meta', op).meta!.tick_source).toBe(profile('honest', op).meta!.tick_source);
    }
    expect(
      JSON.stringify(readdirSync(join(sys, 'records', 'kem-66')).map((f) => readFileSync(join(sys, 'records', 'kem-66', f), 'utf8'))),
    ).not.toMatch(/forged/);
    const text = markdownUnder(pages);
    expect(text.length).toBeGreaterThan(0);
    expect(text.join('\n')).not.toMatch(/forged/);
  });

  it('flood-stdout: 50 MB on stdout while measured is "output limit exceeded", not a crash or a timeout', () => {
    expect(kat('flood-stdout').kat).toBe('PASS'); // it floods only when measured
    for (const op of OPS) {
      const r = record('flood-stdout', op);
      expect(r.status).toBe('failed');
      expect(r.failure).toBe('calibration: output limit exceeded: more than 64 KiB on stdout');
      expect(memory('flood-stdout', op).failure).toBe('output limit exceeded: more than 1024 KiB on stdout');
      expect(profile('flood-stdout', op).failure).toBe('output limit exceeded: more than 1024 KiB on stdout');
    }
  });

  it('flood-kat: the same flood during the KAT is named as such, never "no STATUS line"', () => {
    expect(kat('flood-kat').kat).toBe('CRASH');
    expect(kat('flood-kat').kat_detail).toBe('output limit exceeded: more than 64 KiB on stdout');
    expect(measured('flood-kat')).toBe(false);
  });

  it('hold-pipes: children holding the pipes open do not turn a finished driver into a TIMEOUT', () => {
    expect(kat('hold-pipes').kat).toBe('PASS');
    for (const op of OPS) {
      const r = record('hold-pipes', op);
      expect(r.status).toBe('complete');
      // Judged by the driver's own exit: held pipes would otherwise have run into the process
      // timeout, and a timed-out trial is never part of a complete record.
      expect(memory('hold-pipes', op).status).toBe('complete');
      expect(profile('hold-pipes', op).status).toBe('complete');
    }
  });

  it('claim-huge: a length function claiming 1 TiB is LOADFAIL naming it, before anything is allocated', () => {
    expect(kat('claim-huge').kat).toBe('LOADFAIL');
    expect(kat('claim-huge').kat_detail).toBe('kem_get_ct_len_bytes() claims 1099511627776 bytes, above the bound of 67108864 (64 MiB)');
    expect(measured('claim-huge')).toBe(false);
  });

  it('overflow-far: a write 100 bytes past the claimed length, beyond a 64-byte guard, is OVERFLOW', () => {
    expect(kat('overflow-far').kat).toBe('OVERFLOW');
    expect(kat('overflow-far').kat_detail).toMatch(/^ct: write 101 bytes past the claimed 32/);
    expect(measured('overflow-far')).toBe(false);
  });

  it('kat-replay: a library that computes nothing and replays the known KAT file fails the fresh-seed records', () => {
    expect(kat('kat-replay').kat).toBe('CRYPTOFAIL');
    expect(kat('kat-replay').kat_detail).toMatch(/^fresh seed 0: /);
    expect(measured('kat-replay')).toBe(false);
  });

  it('link-kat and fifo-kat: a KAT output replaced by a link or a FIFO is CRASH; nothing is followed or waited for', () => {
    for (const label of ['link-kat', 'fifo-kat']) {
      expect(kat(label).kat).toBe('CRASH');
      expect(kat(label).kat_detail).toBe(
        'the library tampered with its KAT output: left 1 link(s) or special file(s) in its KAT folder (.kat-output.partial)',
      );
      expect(measured(label)).toBe(false);
      expect(readdirSync(join(sys, 'kat', 'kem-66', label))).toEqual([]);
    }
  });

  it('validate agrees with the evidence', async () => {
    expect(validateDataset(sys)).toEqual([]);
    expect(await main(['validate', sys])).toBe(0);
  });

  it("a library's canary reaches no parsed field: only the bounded stderr captures and the KAT logs' stderr section", () => {
    const found: string[] = [];
    for (const file of filesUnder(sys).filter((f) => f.endsWith('.json'))) {
      const where = relative(sys, file);
      walk(JSON.parse(readFileSync(file, 'utf8')), where, (path, value) => {
        if (value.includes(CANARY)) found.push(path);
      });
    }
    expect(found.length).toBeGreaterThan(0);
    // The stderr of each timing and profiling process is kept, bounded, as today's logs are.
    for (const path of found) expect(path).toMatch(/^(records|profile)\/kem-66\/forge-trial__\w+\.json:(processes\[\d+\]\.)?stderr$/);
    for (const file of filesUnder(join(sys, 'kat')).filter((f) => f.endsWith('.log'))) {
      const lines = readFileSync(file, 'utf8').split('\n');
      const section = lines.indexOf('stderr:');
      lines.forEach((line, i) => {
        if (line.includes(CANARY)) expect(section >= 0 && i > section && line.startsWith('  '), `${file}:${i + 1}`).toBe(true);
      });
    }
    expect(markdownUnder(pages).join('\n')).not.toContain(CANARY);
  });
});

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    return statSync(p).isDirectory() ? filesUnder(p) : [p];
  });
}

function markdownUnder(dir: string): string[] {
  return filesUnder(dir)
    .filter((f) => f.endsWith('.md'))
    .map((f) => readFileSync(f, 'utf8'));
}

/** Calls `visit` with the path (`file:a.b[2].c`) of every string in a JSON value. */
function walk(value: unknown, path: string, visit: (path: string, value: string) => void, sep = ':'): void {
  if (typeof value === 'string') visit(path, value);
  else if (Array.isArray(value)) {
    for (const [i, v] of value.entries()) walk(v, `${path}[${i}]`, visit, '.');
  } else if (value && typeof value === 'object') for (const [k, v] of Object.entries(value)) walk(v, `${path}${sep}${k}`, visit, '.');
}
