import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createProgress, formatDuration } from '../src/campaign/progress.js';

/** A stream that keeps what is written, a terminal or not. */
function sink(tty: boolean): NodeJS.WriteStream & { text: () => string } {
  const chunks: string[] = [];
  const stream = new Writable({
    write(chunk, _enc, done) {
      chunks.push(String(chunk));
      done();
    },
  }) as unknown as NodeJS.WriteStream & { text: () => string };
  Object.assign(stream, { isTTY: tty, columns: 120, text: () => chunks.join('') });
  return stream;
}

describe('progress', () => {
  it('writes one line per step in a log, with its UTC time, the count and the run’s ETA', () => {
    const out = sink(false);
    const p = createProgress(out);
    let left = 125;
    p.start(2, () => left);
    p.note?.('plan: 1 instance(s)');
    p.tick('kem-1/good keygen: complete 1000 cycles');
    left = 3725;
    p.tick('kem-1/good enc: complete 1100 cycles');
    p.done();
    const lines = out.text().trimEnd().split('\n');
    expect(lines).toHaveLength(3);
    expect(lines[0]).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ plan: 1 instance\(s\)$/);
    expect(lines[1]).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ \[1\/2\] kem-1\/good keygen: complete 1000 cycles · ETA 2m05s$/);
    expect(lines[2]).toMatch(/\[2\/2\] kem-1\/good enc: complete 1100 cycles · ETA 1h02m$/);
  });

  it('a second start adds its steps to those done: the count goes on, never past its total', () => {
    const out = sink(false);
    const p = createProgress(out);
    p.start(2);
    p.tick('a');
    p.tick('b');
    p.start(2);
    p.tick('c');
    p.tick('d');
    expect(out.text().match(/\[\d+\/\d+\]/g)).toEqual(['[1/2]', '[2/2]', '[3/4]', '[4/4]']);
  });

  it('draws a bar on a terminal, with the count, the ETA and the last step, and notes above it', async () => {
    const out = sink(true);
    const p = createProgress(out);
    p.start(4, () => 42);
    p.tick('kem-1/good keygen: complete');
    p.note?.('kem-1/good waits for CPU 1');
    p.tick('kem-1/good enc: complete');
    p.done();
    const text = out.text();
    expect(text).toMatch(/\[[=-]+\] 2\/4 · ETA 42s · \d+s · kem-1\/good enc: complete/);
    expect(text).toContain('kem-1/good waits for CPU 1\n');
  });

  it('while it waits for a core, the bar says for what instead of its last step, and the ETA counts the wait', async () => {
    const out = sink(true);
    const p = createProgress(out);
    p.start(4, () => 42);
    p.tick('kem-1/good keygen: complete');
    p.waiting?.('waits for CPU 1, held by kem-2/x measure — ngcc-perf, system s into /d, pid 7 since 2026-12-03T07:00:00Z');
    // Redrawn at once, not at the next step's end.
    expect(out.text()).toMatch(/\] 1\/4 · ETA 42s after the wait \(waiting 0s\) · \d+s · waits for CPU 1, held by kem-2\/x measure/);
    p.waiting?.(undefined);
    p.tick('kem-1/good enc: complete');
    p.done();
    expect(out.text()).toMatch(/\] 2\/4 · ETA 42s · \d+s · kem-1\/good enc: complete/);
    // In a log, the ETA line says it too.
    const log = sink(false);
    const q = createProgress(log);
    q.start(2, () => 10);
    q.waiting?.('waits for CPU 1');
    q.tick('kem-1/good keygen: complete');
    expect(log.text()).toMatch(/\[1\/2\] kem-1\/good keygen: complete · ETA 10s after the wait \(waiting 0s\)\n$/);
  });

  it('spells durations as the ETA shows them', () => {
    expect([0, 37, 245, 3600, 3725, Number.NaN].map(formatDuration)).toEqual(['0s', '37s', '4m05s', '1h00m', '1h02m', '?']);
  });
});
