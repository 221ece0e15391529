import { existsSync, readFileSync } from 'node:fs';
import { arch, hostname, loadavg, release } from 'node:os';
import { compilerVersion, HARNESS_CC } from './toolchain.js';
import { firstLineOf } from '../sandbox/runProcess.js';
import { toolVersion } from '../util/paths.js';

function read(path: string): string | null {
  try {
    return readFileSync(path, 'utf8').trim();
  } catch {
    return null;
  }
}

function cpuinfoField(name: string): string | null {
  const text = read('/proc/cpuinfo') ?? '';
  const m = new RegExp(`^${name}\\s*:\\s*(.*)$`, 'm').exec(text);
  return m ? m[1]!.trim() : null;
}

function osName(): string | null {
  const m = /^PRETTY_NAME="?([^"\n]*)"?/m.exec(read('/etc/os-release') ?? '');
  return m ? m[1]! : null;
}

const cpufreq = (cpu: number, file: string) => read(`/sys/devices/system/cpu/cpu${cpu}/cpufreq/${file}`);

/**
 * The host facts the ngcc-harness records (same field names), for the CPU that runs the trials;
 * `compiler` is the campaign's, whose version is recorded.
 */
export function hostEnvironment(cpu: number, compiler: string = HARNESS_CC) {
  const flags = cpuinfoField('flags') ?? '';
  const memKib = /^MemTotal:\s+(\d+)/m.exec(read('/proc/meminfo') ?? '');
  return {
    hostname: hostname(),
    architecture: arch() === 'x64' ? 'x86_64' : arch() === 'arm64' ? 'aarch64' : arch(),
    cpu_model: cpuinfoField('model name') ?? cpuinfoField('Hardware') ?? cpuinfoField('CPU part'),
    machine: read('/sys/class/dmi/id/product_name'),
    cpu_number: cpu,
    logical_cpus_online: read('/sys/devices/system/cpu/online'),
    virtualized: /\bhypervisor\b/.test(flags) || existsSync('/proc/xen'),
    memory_total_kib: memKib ? Number(memKib[1]) : null,
    os: osName(),
    kernel: release(),
    compiler: compilerVersion(compiler),
    cmake: firstLineOf(['cmake', '--version']),
    node: process.version,
    ngcc_perf_version: toolVersion(),
    perf_event_paranoid: read('/proc/sys/kernel/perf_event_paranoid'),
    cpufreq_governor: cpufreq(cpu, 'scaling_governor'),
    cpufreq_driver: cpufreq(cpu, 'scaling_driver'),
    cpufreq_min_khz: cpufreq(cpu, 'scaling_min_freq'),
    cpufreq_max_khz: cpufreq(cpu, 'scaling_max_freq'),
    intel_pstate_no_turbo: read('/sys/devices/system/cpu/intel_pstate/no_turbo'),
    cpufreq_boost: read('/sys/devices/system/cpu/cpufreq/boost'),
    smt_control: read('/sys/devices/system/cpu/smt/control'),
  };
}

export type HostEnvironment = ReturnType<typeof hostEnvironment>;

/** Conditions that make cycle counts less trustworthy; recorded, never fatal. */
export function hostProblems(env: HostEnvironment): string[] {
  const problems: string[] = [];
  if (env.cpufreq_governor && env.cpufreq_governor !== 'performance')
    problems.push(`cpufreq governor is '${env.cpufreq_governor}', not 'performance'`);
  if (env.cpufreq_min_khz && env.cpufreq_max_khz && env.cpufreq_min_khz !== env.cpufreq_max_khz)
    problems.push(`clock not fixed: ${env.cpufreq_min_khz}..${env.cpufreq_max_khz} kHz`);
  if (env.intel_pstate_no_turbo === '0') problems.push('turbo boost is on (intel_pstate/no_turbo = 0)');
  if (env.cpufreq_boost === '1') problems.push('frequency boost is on (cpufreq/boost = 1)');
  if (env.smt_control === 'on') problems.push('SMT is on: a sibling thread can share the measured core');
  if (env.virtualized) problems.push("virtualized host: the cycle counter may be the hypervisor's");
  return problems;
}

export function loadAverage(): number[] {
  return loadavg();
}

/** A CPU to pin trials to: the last online one, away from where interrupts usually land. */
export function defaultCpu(): number {
  const online = read('/sys/devices/system/cpu/online') ?? '0';
  const last = online.split(',').pop()!.split('-').pop()!;
  return Number(last) || 0;
}
