import type { Candidate } from '../config/campaign.js';
import type { NistNameKey, NistNames } from '../config/instanceBuild.js';
import type { InstanceSpec } from '../config/schemas.js';
import { nativeManifest, nativePath } from './harnessTools.js';

/**
 * The prefix under which native/linked/nist/nist_shim.c exports the NIST entry points of a scheme built
 * with `nist_names` (ngcc_nist_crypto_kem_keypair, …): the KAT driver finds them by it.
 */
const NIST_NAMES_PREFIX = 'ngcc_nist_';

/** The macro of nist_shim.c each `nist_names` key sets. */
const NAME_MACRO: Record<NistNameKey, string> = {
  keypair: 'NGCC_NIST_KEYPAIR',
  enc: 'NGCC_NIST_ENC',
  dec: 'NGCC_NIST_DEC',
  sign: 'NGCC_NIST_SIGN',
  open: 'NGCC_NIST_OPEN',
  signature: 'NGCC_NIST_SIGNATURE',
  verify: 'NGCC_NIST_VERIFY',
  pk_bytes: 'NGCC_NIST_PK_BYTES',
  sk_bytes: 'NGCC_NIST_SK_BYTES',
  ct_bytes: 'NGCC_NIST_CT_BYTES',
  ss_bytes: 'NGCC_NIST_SS_BYTES',
  sig_bytes: 'NGCC_NIST_SIG_BYTES',
};

/** The prefix of the NIST entry points the KAT driver calls: the instance's own, or the shim's. */
export const nistEntryPrefix = (inst: InstanceSpec): string => (inst.nist_names ? NIST_NAMES_PREFIX : (inst.nist_prefix ?? ''));

function namesDefines(names: NistNames): string[] {
  const headers = names.headers.map((h, i) => `-DNGCC_NIST_HEADER_${i + 1}="${h}"`);
  const mapped = (Object.keys(NAME_MACRO) as NistNameKey[]).flatMap((k) =>
    names[k] === undefined ? [] : [`-D${NAME_MACRO[k]}=${names[k]}`],
  );
  return ['-DNGCC_NIST_NAMES', ...headers, ...mapped];
}

/**
 * What an `api: nist` build adds: the shim that gives the ICCS API over the NIST one, the KAT
 * generator behind `randombytes` (NIST's AES-256-CTR DRBG, or HQC's SHAKE-256 generator for
 * `kat_rng: hqc`), and the macros that tell the shim the scheme's names.
 */
export function nistShim(candidate: Candidate, inst: InstanceSpec): { sources: string[]; defines: string[] } {
  if (candidate.api !== 'nist') return { sources: [], defines: [] };
  // The shim and the generator kat_rng chooses: native/binaries.json's `linked.nist` (native/linked/nist/).
  const nist = nativeManifest().linked.nist;
  const generator = nist.generators[candidate.katRng === 'hqc' ? 'hqc' : 'nist'];
  return {
    sources: [...nist.sources, generator].map(nativePath),
    defines: [
      `-DNGCC_NIST_PREFIX=${nistEntryPrefix(inst)}`,
      candidate.type === 'kem' ? '-DNGCC_NIST_KEM' : '-DNGCC_NIST_SIG',
      ...(inst.nist_names ? namesDefines(inst.nist_names) : []),
    ],
  };
}

/**
 * The instance's own compiler arguments from candidate.yml: its `cflags`, then its `defines` as
 * -D. They follow the flag set's flags, so an instance may override an optimisation level.
 */
export const instanceFlags = (inst: InstanceSpec): string[] => [...inst.cflags, ...inst.defines.map((d) => `-D${d}`)];
