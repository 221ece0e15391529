// Types of ct-model.mjs for the TypeScript tests.
export declare const CT: {
  calls: number;
  path_calls: number;
  startup_s: number;
  op_budget_s: number;
  max_calls: number;
  coverage_slowdown_assumed: number;
  slowdown_min: number;
  valgrind_factor: number;
};
export declare function setupSeconds(type: string, op: string, s: Record<string, number>, calls: number): number;
export declare function processSeconds(type: string, op: string, s: Record<string, number>, calls: number): number;
export declare function searchRuns(from: number, upTo: number, needed: number): number[];
export interface CtModelBuild {
  factor: number;
  divisions: (op: string) => number;
}
export interface CtModelCosts {
  startup_s: number;
  coverage_run_s: number;
  coverage_slowdown: number;
  division_factor: number;
  needed: (op: string) => number;
}
export declare function ctInstanceSeconds(
  type: string,
  seconds: Record<string, number>,
  builds: CtModelBuild[],
  m: CtModelCosts,
): { core: number; compiles: number; runs: number; coverageRuns: number; coverageNative: number; divided: number };
