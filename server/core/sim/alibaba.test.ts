import { describe, expect, it } from 'vitest';
import { alibabaNodeGpus, parseAlibabaPods } from './alibaba';

const pods = [
  'name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time',
  'p0,12000,16384,1,1000,,LS,Running,0,500,10', // 1 GPU, submit 0, runtime 490
  'p1,6000,12288,1,460,V100M16|V100M32,LS,Running,5,105,5', // shared GPU (460 milli) → 1 GPU, runtime 100
  'p2,88000,327680,8,1000,,Burstable,Succeeded,7,1007,7', // 8 GPUs
  'p3,4000,8000,0,0,,BE,Running,8,100,8', // no GPU → dropped
  'p4,4000,8000,1,1000,,BE,Pending,9,100,', // never scheduled → dropped
  'p5,4000,8000,1,1000,,BE,Failed,9,9,9', // runtime 0 → dropped
  'p6,4000,8000,4,1000,,LS,Running,3,20,4', // 4 GPUs > machine of 10? no: 4 ≤ 10, kept
  'p7,4000,8000,8,1000,,LS,Running,3,20,4', // fine
].join('\n');

describe('Alibaba GPU pods', () => {
  it('maps pods to GPU jobs and drops the unusable ones', () => {
    const r = parseAlibabaPods(pods, 10);
    expect(r.records).toBe(8);
    expect(r.drops).toEqual({ noGpu: 1, noTimes: 1, noRuntime: 1, tooLarge: 0 });
    const t = r.trace;
    expect(t.machineSize).toBe(10);
    expect(Array.from(t.submitSeconds)).toEqual([0, 3, 3, 5, 7]);
    expect(Array.from(t.processors)).toEqual([1, 4, 8, 1, 8]);
    expect(Array.from(t.runtimeSeconds)).toEqual([490, 16, 16, 100, 1000]);
    expect(Array.from(t.estimateSeconds)).toEqual(Array.from(t.runtimeSeconds));
  });

  it('drops pods larger than the machine', () => {
    expect(parseAlibabaPods(pods, 4).drops.tooLarge).toBe(2);
  });

  it('sums node GPUs for the machine size', () => {
    expect(alibabaNodeGpus('sn,cpu_milli,memory_mib,gpu,model\nn0,64000,262144,2,P100\nn1,96000,786432,8,V100M32\n')).toBe(10);
  });
});
