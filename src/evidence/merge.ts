import { copyFileSync, existsSync, mkdirSync, readFileSync, renameSync, rmdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, posix, relative, resolve, sep } from 'node:path';
import { InputError } from '../errors.js';
import { filesUnder, nonRegularEntries, readJson, writeJsonAtomic } from '../util/fsx.js';
import { BUILD_FILE, CAMPAIGN_FILE, instanceOfPath, isTransient as transient, LOCK_FILE } from './layout.js';
import { lockSystem, lockText, otherLiveWriter } from './lock.js';
import { validateDataset } from './validate.js';

type Json = Record<string, unknown>;

function parseJsonFile(path: string, display: string): Json {
  const value = readJson<unknown>(path, display);
  if (!value || typeof value !== 'object' || Array.isArray(value)) throw new InputError(display, '', 'expected a JSON object');
  return value as Json;
}

/** One evidence folder (a shard, or the existing output), its files sorted by instance. */
interface Folder {
  dir: string;
  /** As the user named it, for messages. */
  shown: string;
  build?: Json;
  instances: Json;
  campaign?: Json;
  byInstance: Map<string, string[]>;
  shared: string[];
}

function readFolder(dir: string, shown: string, shard: boolean): Folder {
  const folder: Folder = { dir, shown, instances: {}, byInstance: new Map(), shared: [] };
  const writer = shard ? otherLiveWriter(dir) : undefined;
  if (writer !== undefined)
    throw new InputError(shown, '', `a run (pid ${writer}) is still writing this shard; merge it when the run has ended`);
  const strays = nonRegularEntries(dir);
  if (strays.length > 0)
    throw new InputError(
      join(shown, strays[0]!),
      '',
      `a link or special file (${strays.length} in all): evidence holds regular files only, nothing is copied`,
    );
  const buildPath = join(dir, BUILD_FILE);
  if (existsSync(buildPath)) {
    folder.build = parseJsonFile(buildPath, join(shown, BUILD_FILE));
    const instances = folder.build.instances ?? {};
    if (!instances || typeof instances !== 'object' || Array.isArray(instances))
      throw new InputError(join(shown, BUILD_FILE), 'instances', 'expected an object');
    folder.instances = instances as Json;
  } else if (shard) throw new InputError(shown, '', 'no build.json: not the evidence folder of a run (DATA_DIR/ID)');
  if (existsSync(join(dir, CAMPAIGN_FILE))) folder.campaign = parseJsonFile(join(dir, CAMPAIGN_FILE), join(shown, CAMPAIGN_FILE));
  for (const rel of filesUnder(dir)) {
    if (transient(rel) || rel === BUILD_FILE || rel === CAMPAIGN_FILE) continue;
    const key = instanceOfPath(rel);
    if (key === undefined) folder.shared.push(rel);
    else {
      if (shard && !(key in folder.instances))
        throw new InputError(join(shown, rel), '', `belongs to instance ${key}, which has no entry in ${join(shown, BUILD_FILE)}`);
      folder.byInstance.set(key, [...(folder.byInstance.get(key) ?? []), rel]);
    }
  }
  return folder;
}

/** JSON with sorted keys, so equal objects compare equal whatever their key order. */
function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v as Json).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : v,
  );
}

const sameBytes = (a: string, b: string) => readFileSync(a).equals(readFileSync(b));

/** Why two shards' copies of one instance differ, or undefined when they are the same. */
function instanceDifference(a: Folder, b: Folder, key: string): string | undefined {
  if (canonicalJson(reaimLibrary(a.instances[key], key, a, '/')) !== canonicalJson(reaimLibrary(b.instances[key], key, b, '/')))
    return 'a different build.json entry';
  const fa = a.byInstance.get(key) ?? [];
  const fb = new Set(b.byInstance.get(key) ?? []);
  for (const rel of fa) if (!fb.has(rel)) return `no ${rel}`;
  if (fb.size !== fa.length) return `a ${[...fb].find((r) => !fa.includes(r))} the other lacks`;
  for (const rel of fa) if (!sameBytes(join(a.dir, rel), join(b.dir, rel))) return `a different ${rel}`;
  return undefined;
}

/**
 * `library` is relative to the campaign folder and points into the shard's own build/ folder.
 * When the shard holds that library (a local run), the merged copy is the one in the output:
 * the path is re-aimed there. Otherwise (the evidence of a CI shard, which leaves build/ behind)
 * the path says where the shard built it and is kept.
 */
function reaimLibrary(entry: unknown, key: string, shard: Folder, out: string): unknown {
  const e = entry as { library?: unknown };
  if (!e || typeof e !== 'object' || typeof e.library !== 'string') return entry;
  const at = e.library.lastIndexOf(`build/${key}/`);
  if (at < 0 || (at > 0 && e.library[at - 1] !== '/')) return entry;
  const tail = e.library.slice(at);
  if (!existsSync(join(shard.dir, tail))) return entry;
  const move = relative(shard.dir, out).split(sep).join('/');
  return { ...e, library: posix.join(e.library.slice(0, at) || '.', move, tail) };
}

const time = (v: unknown) => (typeof v === 'string' && !Number.isNaN(Date.parse(v)) ? Date.parse(v) : undefined);

/**
 * campaign.json of merged evidence: the earliest start, the latest end (null while any part has
 * not ended), every part's host checks once, the environment at the earliest start and the latest
 * one; `sandbox: none` when any part ran unsandboxed; `last_run` of the latest run; other fields
 * from the first part.
 */
export function mergeCampaignJson(parts: Json[]): Json | undefined {
  if (parts.length === 0) return undefined;
  const byStart = parts.filter((p) => time(p.started_utc) !== undefined).sort((a, b) => time(a.started_utc)! - time(b.started_utc)!);
  const byEnd = parts.filter((p) => time(p.ended_utc) !== undefined).sort((a, b) => time(a.ended_utc)! - time(b.ended_utc)!);
  const first = byStart[0];
  const last = byEnd[byEnd.length - 1];
  const hostChecks = new Map<string, unknown>();
  for (const p of parts) for (const check of Array.isArray(p.host_checks) ? p.host_checks : []) hostChecks.set(canonicalJson(check), check);
  const merged: Json = { ...parts[0]!, host_checks: [...hostChecks.values()] };
  if (first) {
    merged.started_utc = first.started_utc;
    if ('environment_at_start' in first) merged.environment_at_start = first.environment_at_start;
  }
  if (parts.some((p) => p.ended_utc === null)) merged.ended_utc = null;
  else if (last) merged.ended_utc = last.ended_utc;
  if (last && 'environment_latest' in last) merged.environment_latest = last.environment_latest;
  if (parts.some((p) => p.sandbox === 'none')) merged.sandbox = 'none';
  // The night the merged folder stands for (its trend-page name): the latest run that went into it.
  const runs = parts.filter((p) => time((p.last_run as Json | undefined)?.started_utc) !== undefined);
  const latest = runs.sort((a, b) => time((a.last_run as Json).started_utc)! - time((b.last_run as Json).started_utc)!).at(-1);
  if (latest) merged.last_run = latest.last_run;
  return merged;
}

/** Instances in the existing order, replaced in place; new ones appended in the order given. */
export function mergeInstances(existing: Json, incoming: Json): Json {
  const out: Json = {};
  for (const [key, entry] of Object.entries(existing)) out[key] = key in incoming ? incoming[key] : entry;
  for (const [key, entry] of Object.entries(incoming)) if (!(key in out)) out[key] = entry;
  return out;
}

export interface MergeResult {
  /** Instances new to the output, replaced in it (the incoming evidence won), and left as they were. */
  added: string[];
  replaced: string[];
  kept: string[];
  /** false: the merge would have introduced `problems`; the output is unchanged. */
  applied: boolean;
  /** Validation problems of the result: new ones when not applied, else those the inputs already had. */
  problems: string[];
}

const shownPath = (p: string) => relative(process.cwd(), p) || '.';

/**
 * Merges shard evidence folders (each DATA_DIR/<system>/ of one run or shard) into `into`,
 * instance by instance. An instance the shards carry replaces the output's copy as a whole (its
 * build.json entry and every file of it); the output's other instances stay. Two shards carrying
 * one instance differently is an error naming both. The result is built in a sibling folder under
 * the output's evidence lock and renamed into place only when complete and when it adds no
 * validation problem: a failed merge leaves the output as it was.
 */
export function mergeShardFolders(parts: string[], into: string): MergeResult {
  const out = resolve(into);
  for (const p of parts) {
    const abs = resolve(p);
    if (!existsSync(abs) || !statSync(abs).isDirectory()) throw new InputError(p, '', 'no such shard folder');
    const inside = (a: string, b: string) => a === b || a.startsWith(`${b}${sep}`);
    if (inside(abs, out) || inside(out, abs))
      throw new InputError('command line', '--out', `${into} and the shard folder ${p} overlap; merge into another folder`);
  }
  const existed = existsSync(out);
  if (existed && !statSync(out).isDirectory()) throw new InputError('command line', '--out', `${into} is not a folder`);
  const release = lockSystem(out);
  let applied = false;
  try {
    const result = mergeLocked(parts, out, into);
    applied = result.applied;
    return result;
  } finally {
    release();
    // A failed merge into a folder that did not exist leaves no empty folder behind.
    if (!applied && !existed) {
      try {
        rmdirSync(out);
      } catch {
        // not empty: not ours to remove
      }
    }
  }
}

function mergeLocked(parts: string[], out: string, into: string): MergeResult {
  const shards = parts.map((p) => readFolder(resolve(p), p, true));
  const current = readFolder(out, into, false);

  const systems = [current, ...shards].filter((f) => typeof f.campaign?.system_id === 'string');
  const other = systems.find((f) => f.campaign!.system_id !== systems[0]!.campaign!.system_id);
  if (other)
    throw new InputError(
      join(other.shown, CAMPAIGN_FILE),
      'system_id',
      `'${String(other.campaign!.system_id)}', but ${join(systems[0]!.shown, CAMPAIGN_FILE)} says '${String(systems[0]!.campaign!.system_id)}': evidence of two systems`,
    );

  // Which shard brings each instance; the same instance from two shards must be the same evidence.
  const source = new Map<string, Folder>();
  for (const shard of shards)
    for (const key of Object.keys(shard.instances)) {
      const earlier = source.get(key);
      if (!earlier) source.set(key, shard);
      else {
        const why = instanceDifference(earlier, shard, key);
        if (why)
          throw new InputError(
            shard.shown,
            `instance ${key}`,
            `also in ${earlier.shown}, which has ${why}: merge one of them (a re-run into its own folder is merged alone, after the others)`,
          );
      }
    }
  // Files outside the instance layout: the same content wherever they come from.
  const shared = new Map<string, Folder>();
  for (const f of [current, ...shards])
    for (const rel of f.shared) {
      const earlier = shared.get(rel);
      if (!earlier) shared.set(rel, f);
      else if (!sameBytes(join(earlier.dir, rel), join(f.dir, rel)))
        throw new InputError(join(f.shown, rel), '', `differs from ${join(earlier.shown, rel)} (both folders hold ${rel})`);
    }

  const tmp = join(dirname(out), `.${basename(out)}.merging-${process.pid}`);
  rmSync(tmp, { recursive: true, force: true });
  mkdirSync(tmp, { recursive: true });
  try {
    const copy = (from: Folder, rel: string) => {
      mkdirSync(dirname(join(tmp, rel)), { recursive: true });
      copyFileSync(join(from.dir, rel), join(tmp, rel));
    };
    for (const [key, files] of current.byInstance) if (!source.has(key)) for (const rel of files) copy(current, rel);
    for (const [key, shard] of source) for (const rel of shard.byInstance.get(key) ?? []) copy(shard, rel);
    for (const [rel, f] of shared) copy(f, rel);

    const incoming: Json = {};
    for (const [key, shard] of source) incoming[key] = reaimLibrary(shard.instances[key], key, shard, out);
    const base = current.build ?? shards[0]!.build!;
    writeJsonAtomic(join(tmp, BUILD_FILE), { ...base, instances: mergeInstances(current.instances, incoming) });
    const campaign = mergeCampaignJson([current, ...shards].flatMap((f) => (f.campaign ? [f.campaign] : [])));
    if (campaign) writeJsonAtomic(join(tmp, CAMPAIGN_FILE), campaign);

    const before = new Set([current, ...shards].flatMap((f) => (existsSync(join(f.dir, BUILD_FILE)) ? validateDataset(f.dir) : [])));
    const problems = validateDataset(tmp);
    const introduced = problems.filter((p) => !before.has(p));
    const keys = Object.keys(current.instances);
    const result = {
      added: [...source.keys()].filter((k) => !(k in current.instances)),
      replaced: keys.filter((k) => source.has(k)),
      kept: keys.filter((k) => !source.has(k)),
    };
    if (introduced.length > 0) return { ...result, applied: false, problems: introduced };

    // The lock travels with the folder: the output stays locked until release().
    writeFileSync(join(tmp, LOCK_FILE), lockText());
    const old = join(dirname(out), `.${basename(out)}.replaced-${process.pid}`);
    renameSync(out, old);
    try {
      renameSync(tmp, out);
    } catch (e) {
      try {
        renameSync(old, out);
      } catch {
        throw new InputError(
          shownPath(out),
          '',
          `could not be replaced (${e instanceof Error ? e.message : String(e)}); its previous content is in ${shownPath(old)}`,
        );
      }
      throw e;
    }
    rmSync(old, { recursive: true, force: true });
    return { ...result, applied: true, problems };
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}
