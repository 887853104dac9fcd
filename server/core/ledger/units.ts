// Units of budgets. Budgets are stored as integers: GPU-seconds, or euro cents for credit lines.

export const GPU_SECONDS_PER_HOUR = 3600;

/** gpuHoursToSeconds converts whole GPU-hours to GPU-seconds. */
export function gpuHoursToSeconds(gpuHours: number): number {
  return Math.round(gpuHours * GPU_SECONDS_PER_HOUR);
}

/** gpuSecondsToHours converts GPU-seconds to GPU-hours (for display; may be fractional). */
export function gpuSecondsToHours(gpuSeconds: number): number {
  return gpuSeconds / GPU_SECONDS_PER_HOUR;
}

/** costCents returns the price of GPU-seconds at a tariff in cents per GPU-hour, rounded half up to a cent. */
export function costCents(gpuSeconds: number, centsPerGpuHour: number): number {
  return Math.floor((gpuSeconds * centsPerGpuHour + GPU_SECONDS_PER_HOUR / 2) / GPU_SECONDS_PER_HOUR);
}
