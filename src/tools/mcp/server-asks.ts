/** Who answers what a server asks during one tool call (either protocol era; absent: it is refused). */
import type { ElicitTarget } from './elicitation.ts';
import type { Sampler } from './sampling.ts';

export interface ServerAsks {
  elicit?: ElicitTarget | undefined;
  sampler?: Sampler | undefined;
}
