import * as core from '@actions/core';
import { stoppable } from './stoppable.js';
import { errorMessage, isInputError } from './errors.js';
import { readInputs } from './github/inputs.js';
import { diskFullError } from './util/fsx.js';
import { doctorSummary } from './action/doctorSummary.js';
import { nightly, reportOnly } from './action/nightly.js';
import { pullRequest } from './prcheck/pullRequest.js';

/** The action's entry: one of three modes, everything reported through outputs and the summary. */
export async function run(): Promise<void> {
  try {
    const inputs = readInputs();
    // A cancelled job signals this process only; submission code in its own process groups would
    // keep running on the self-hosted runner, beyond any timeout, and disturb the next job.
    await stoppable(
      async () => {
        if (inputs.mode !== 'report') await doctorSummary(inputs);
        if (inputs.mode === 'pull-request') await pullRequest(inputs);
        else if (inputs.mode === 'nightly') await nightly(inputs);
        else await reportOnly(inputs);
      },
      (line) => core.error(`ngcc-perf ${line}`),
    );
  } catch (e) {
    const input = isInputError(e) ? e : diskFullError(e);
    core.setFailed(input ? input.message : `ngcc-perf: ${errorMessage(e)}`);
  }
}
