import { join } from 'node:path';

/** Where each piece of evidence lives under DATA_DIR/<system>/ (CONTRACT §3). */
export const evidencePaths = (systemDir: string) => ({
  campaign: join(systemDir, 'campaign.json'),
  build: join(systemDir, 'build.json'),
  record: (id: string, label: string, op: string) => join(systemDir, 'records', id, `${label}__${op}.json`),
  profile: (id: string, label: string, op: string) => join(systemDir, 'profile', id, `${label}__${op}.json`),
  survey: (id: string, label: string) => join(systemDir, 'survey', id, `${label}.json`),
  memory: (id: string, label: string, op: string) => join(systemDir, 'memory', id, `${label}__${op}.json`),
  katLog: (id: string, label: string) => join(systemDir, 'kat', id, `${label}.log`),
  katDir: (id: string, label: string) => join(systemDir, 'kat', id, label),
  buildDir: (id: string, label: string) => join(systemDir, 'build', id, label),
});

/** Paths as written into evidence: relative to the system folder, '/'-separated. */
export function relativeTo(systemDir: string, path: string): string {
  return path.startsWith(`${systemDir}/`) ? path.slice(systemDir.length + 1) : path;
}
