import type { KatOutcome } from './runKat.js';
import { formatManifestLine } from '../config/katManifest.js';
import type { KatStatus } from './status.js';

export interface KatLogHeader {
  library: string;
  id: string;
  type: string;
  algorithm: string;
  instance: string;
  api: string;
  kat_rng: string;
  compiler: string;
  build_flags: string;
  flags: string;
}

const pad = (k: string) => k.padEnd(11);

/** The per-instance KAT log; its last line is always `RESULT <id> <label> <STATUS> [detail]`. */
export function formatKatLog(header: KatLogHeader, body: string[], status: KatStatus, detail?: string): string {
  const lines = Object.entries(header).map(([k, v]) => `${pad(k)} = ${v}`);
  lines.push(...body);
  lines.push(`RESULT ${header.id} ${header.instance} ${status} ${detail ?? ''}`.trimEnd());
  return `${lines.join('\n')}\n`;
}

export function katBody(outcome: KatOutcome, fileShown?: string): string[] {
  const body: string[] = [];
  for (const [k, v] of Object.entries(outcome.sizes)) body.push(`${pad(k)} = ${v}`);
  body.push(`records     = ${outcome.records}`);
  if (outcome.files)
    for (const f of outcome.files)
      body.push(
        `file   ${f.file}${f.limit ? ` (:${f.limit})` : ''} ${f.status}${f.detail ? ` ${f.detail}` : ''}; ${f.seconds.toFixed(3)} s${f.bytes !== undefined ? `, ${f.bytes} bytes` : ''}`,
      );
  else if (outcome.file) body.push(`wrote  ${fileShown ?? outcome.file} (${outcome.fileBytes ?? 0} bytes)`);
  for (const d of outcome.digests)
    body.push(
      `manifest ${formatManifestLine({ ...d.entry, sha256: d.actual })}${d.actual === d.entry.sha256 ? '' : `  (expected ${d.entry.sha256})`}`,
    );
  const stderr = (outcome.run?.stderr ?? '').trim();
  if (stderr)
    body.push(
      'stderr:',
      ...stderr
        .split('\n')
        .slice(0, 40)
        .map((l) => `  ${l}`),
    );
  return body;
}

/** Reads the RESULT line of a KAT log. */
export function parseResultLine(log: string): { id: string; label: string; status: string; detail: string } | undefined {
  const last = log.trimEnd().split('\n').pop() ?? '';
  const m = /^RESULT (\S+) (\S+) (\S+) ?(.*)$/.exec(last);
  return m ? { id: m[1]!, label: m[2]!, status: m[3]!, detail: m[4]! } : undefined;
}
