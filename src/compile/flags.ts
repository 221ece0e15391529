/** Build flags of the ICCS self-assessment guide (June 2026) and the harness additions. */
export type Arch = 'x86_64' | 'aarch64' | 'other';
export type FlagVariant = 'reference' | 'performance' | 'resource';

const WARN = ['-std=c99', '-Wpedantic', '-Wall', '-Wextra'];

const GUIDE: Record<Exclude<Arch, 'other'>, Record<FlagVariant, string[]>> = {
  x86_64: {
    reference: [...WARN, '-O2'],
    performance: ['-O3', '-march=x86-64', '-mavx2', '-mtune=native', '-flto', '-fomit-frame-pointer', ...WARN],
    resource: ['-Os', '-march=x86-64', '-mavx2', '-flto', '-fomit-frame-pointer', ...WARN],
  },
  aarch64: {
    reference: [...WARN, '-O2'],
    performance: ['-O3', '-march=armv8.2-a+sve', '-flto', '-fomit-frame-pointer', ...WARN],
    // The guide names no ARM resource set: the x86 one without the x86-only options.
    resource: ['-Os', '-flto', '-fomit-frame-pointer', ...WARN],
  },
};

/** What every library needs to be loadable by the drivers. */
const HARNESS_ADDITIONS = ['-fPIC', '-D_GNU_SOURCE'];

/** Permissive fallback when the guide flags fail: GNU dialect, newer-gcc errors demoted. */
export const HARNESS_DEFAULT = [
  '-std=gnu11',
  '-O2',
  '-fPIC',
  '-D_GNU_SOURCE',
  '-Wno-error=implicit-function-declaration',
  '-Wno-error=incompatible-pointer-types',
  '-Wno-error=int-conversion',
  '-Wno-error=implicit-int',
];

export function hostArch(): Arch {
  if (process.arch === 'x64') return 'x86_64';
  if (process.arch === 'arm64') return 'aarch64';
  return 'other';
}

export function guideFlags(arch: Arch, variant: FlagVariant): string[] {
  const set = arch === 'other' ? GUIDE.x86_64.reference : GUIDE[arch][variant];
  return [...set, ...HARNESS_ADDITIONS];
}
