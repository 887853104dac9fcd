import { describe, expect, it } from 'vitest';
import { UsageError } from './exit-codes.mjs';
import { parseJobFile, parseYamlSubset } from './job-file.mjs';

const YAML = `# nightly fine-tune
name: "llama: nightly"   # a colon needs quotes
kind: fine_tuning
allocationId: 3f2c0d9e-1111-4aaa-8bbb-000000000001
resourceClassId: h100
gpus: 8
nodes: 1
walltimeMinutes: 240
image: nvcr.io/nvidia/pytorch:24.05-py3
command: |
  torchrun --nproc-per-node 8 train.py \\
    --epochs 3
  echo done
env:
  WANDB_MODE: offline
  PORT: 0800
  GREETING: 'it''s # not a comment'
  EMPTY:
`;

const JOB = {
  name: 'llama: nightly',
  kind: 'fine_tuning',
  allocationId: '3f2c0d9e-1111-4aaa-8bbb-000000000001',
  resourceClassId: 'h100',
  gpus: 8,
  nodes: 1,
  walltimeMinutes: 240,
  image: 'nvcr.io/nvidia/pytorch:24.05-py3',
  command: 'torchrun --nproc-per-node 8 train.py \\\n  --epochs 3\necho done\n',
  env: { WANDB_MODE: 'offline', PORT: '0800', GREETING: "it's # not a comment", EMPTY: '' },
};

describe('parseJobFile', () => {
  it('reads the form’s fields from YAML: quotes, comments, a literal block, the env map as texts', () => {
    expect(parseJobFile(YAML, 'job.yaml')).toEqual(JOB);
  });

  it('reads the same job from JSON, numbers as numbers or texts', () => {
    expect(parseJobFile(JSON.stringify({ ...JOB, gpus: '8', env: { ...JOB.env, PORT: '0800' } }), 'job.json')).toEqual(JOB);
  });

  it('defaults nodes to 1 and env to nothing, as the form starts', () => {
    const { nodes: _n, env: _e, ...required } = JOB;
    expect(parseJobFile(JSON.stringify(required), 'job.json')).toEqual({ ...required, nodes: 1, env: {} });
  });

  it('reads a job array as Slurm writes it, and names the field of a bad one', () => {
    expect((parseJobFile(`${YAML}array: 0-19%4\n`, 'job.yaml') as { array?: string }).array).toBe('0-19%4');
    expect((parseJobFile(`${YAML}`, 'job.yaml') as { array?: string }).array).toBeUndefined();
    expect(() => parseJobFile(`${YAML}array: every task\n`, 'job.yaml')).toThrow(/job.yaml: "array" must be task indexes/);
  });

  it('reads a dependency as Slurm writes it, with the portal’s job ids', () => {
    const a = '3f2c0d9e-1111-4aaa-8bbb-00000000000a';
    const b = '3F2C0D9E-1111-4AAA-8BBB-00000000000B';
    expect((parseJobFile(`${YAML}dependency: afterok:${a}:${b}\n`, 'job.yaml') as { dependency?: unknown }).dependency).toEqual({ type: 'afterok', jobIds: [a, b.toLowerCase()] });
    expect(() => parseJobFile(`${YAML}dependency: after:${a}\n`, 'job.yaml')).toThrow(/job.yaml: "dependency" must be afterok, afterany, afternotok followed by job ids/);
    expect(() => parseJobFile(`${YAML}dependency: afterany:42\n`, 'job.yaml')).toThrow(/"42" is not a job id/);
  });

  it.each([
    ['name: x\ngpu: 4\n', /job.yaml: unknown field "gpu" \(a job file has: name, kind/],
    ['name: x\n', /job.yaml: missing fields: kind, allocationId, resourceClassId, gpus, walltimeMinutes, image, command/],
    [YAML.replace('gpus: 8', 'gpus: eight'), /"gpus" must be a whole number, not "eight"/],
    [YAML.replace('gpus: 8', 'gpus: 2.5'), /"gpus" must be a whole number/],
    [YAML.replace('kind: fine_tuning', 'kind: finetune'), /"kind" must be one of training, fine_tuning, inference, batch, not "finetune"/],
    [YAML.replace('gpus: 8', 'gpus: 8\ngpus: 4'), /job.yaml: line 7: "gpus" is given twice/],
    ['- name: x\n', /line 1: a job file is a map of fields, not a list/],
    ['name: x\n  indented: y\n', /line 2: unexpected indentation/],
    ['name: [a, b]\n', /line 1: "\[a, b\]" needs more YAML than job files use/],
    ['name: &anchor x\n', /line 1: .* needs more YAML/],
    ['name: "open\n', /line 1: a double-quoted string does not end/],
    ['name: "x" y\n', /line 1: text after a quoted string/],
    ['just text\n', /line 1: expected "field: value", found "just text"/],
    ['env:\n  - A\n', /line 2: "env" must be a map/],
    ['env:\n  A: 1\n    B: 2\n', /line 3: indent the entries of "env" alike/],
    ['{"name": ', /job.yaml: not valid JSON/],
    ['["a"]', /line 1: expected "field: value"/],
  ])('%j is refused with where and why', (text, message) => {
    expect(() => parseJobFile(text, 'job.yaml')).toThrow(UsageError);
    expect(() => parseJobFile(text, 'job.yaml')).toThrow(message);
  });
});

describe('parseYamlSubset', () => {
  it.each([
    ['a: |-\n  x\n  y\n', { a: 'x\ny' }],
    ['a: |\n  x\n\n  y\n\n\nb: z\n', { a: 'x\n\ny\n', b: 'z' }],
    ['a: |+\n  x\n\nb: z\n', { a: 'x\n\n', b: 'z' }],
    ['a: >\n  one\n  two\n\n  three\n', { a: 'one two\nthree\n' }],
    ['a: >-\n  one\n  two\n', { a: 'one two' }],
    ['a: "tab\\there \\u00e9"\n', { a: 'tab\there é' }],
    ['a: x#not-a-comment # a comment\n', { a: 'x#not-a-comment' }],
    ['---\na: ~\nb: null\nc:\nd: {}\n...\nignored: after the end\n', { a: null, b: null, c: null, d: {} }],
    ['\uFEFFa: 1\r\nb: 2\r\n', { a: '1', b: '2' }],
  ])('%j', (text, expected) => {
    expect(parseYamlSubset(text)).toEqual(expected);
  });
});
