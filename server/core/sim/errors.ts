/** SimInputError marks invalid input (configuration, job, trace, call order) rather than a bug in the simulator. */
export class SimInputError extends Error {
  override name = 'SimInputError';
}
