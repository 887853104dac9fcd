// zod schemas for the fields the adapter reads from slurmrestd's answers (v0.0.38 / dbv0.0.38), and only
// those: the generated types say what Slurm may send, these check what actually came before it is used.
// Optional and nullable wherever Slurm 22.05 leaves a field out or sends null (unset numbers, INFINITE).
import { z } from 'zod';

const num = z.number().nullable().optional();
const str = z.string().nullable().optional();

/** A slurmctld job (GET /slurm/v0.0.38/jobs, /job/{id}). */
export const ctldJobSchema = z.object({
  job_id: z.number(),
  name: z.string(),
  // A string in v0.0.38 ("RUNNING", or with flags "RUNNING+COMPLETING"); an array in later versions.
  job_state: z.union([z.string(), z.array(z.string())]),
  state_reason: str,
  state_description: str,
  account: str,
  partition: str,
  user_name: str,
  comment: str,
  /** A wait status: 256 = exit 1, a signal n = n. */
  exit_code: num,
  submit_time: num,
  start_time: num,
  /** A forecast while the job runs. */
  end_time: num,
  /** Minutes. */
  time_limit: num,
  nodes: str,
  node_count: num,
  tres_alloc_str: str,
  tres_req_str: str,
  tres_per_node: str,
  gres_detail: z.array(z.string()).nullable().optional(),
  // Job arrays: 0 / null / "" on a job that is no array. A started task has its own job_id with
  // array_job_id and array_task_id; the tasks not started yet are one record (job_id = array_job_id,
  // array_task_id null) whose array_task_string names them ("4-19%4", cut short with "..." past 64 chars).
  array_job_id: num,
  array_task_id: num,
  array_task_string: str,
  array_max_tasks: num,
});
export type CtldJob = z.infer<typeof ctldJobSchema>;

export const ctldJobsResponseSchema = z.object({ jobs: z.array(ctldJobSchema).nullable().optional() });

export const submitResponseSchema = z.object({ job_id: z.number().int().positive() });

export const pingResponseSchema = z.object({
  pings: z.array(z.object({ hostname: str, ping: str, status: num, mode: str })).nullable().optional(),
});

export const diagResponseSchema = z.object({
  statistics: z.object({ dbd_agent_queue_size: num, agent_queue_size: num, jobs_pending: num, jobs_running: num }).nullable().optional(),
});

const tresEntrySchema = z.object({ type: z.string(), name: str, count: num });
export type TresEntry = z.infer<typeof tresEntrySchema>;
const tresListSchema = z.array(tresEntrySchema).nullable().optional();

const dbExitCodeSchema = z
  .object({
    status: str,
    return_code: num,
    signal: z.object({ signal_id: num, name: str }).nullable().optional(),
  })
  .nullable()
  .optional();

/** A slurmdbd job record (GET /slurmdb/v0.0.38/jobs, /job/{id}). */
export const dbJobSchema = z.object({
  job_id: z.number(),
  name: z.string(),
  account: str,
  partition: str,
  user: str,
  nodes: str,
  state: z.object({ current: z.union([z.string(), z.array(z.string())]), reason: str }),
  exit_code: dbExitCodeSchema,
  derived_exit_code: dbExitCodeSchema,
  time: z.object({
    elapsed: num,
    submission: num,
    start: num,
    end: num,
    /** Minutes. */
    limit: num,
  }),
  tres: z.object({ allocated: tresListSchema, requested: tresListSchema }).nullable().optional(),
  /**
   * Job arrays: job_id 0 on a job that is no array. A task's record has task_id; the record of tasks not
   * started has task_id null and `task` a hex bitmap of their indexes ("0x3FC" = 2-9), as last sent.
   */
  array: z
    .object({
      job_id: num,
      task_id: num,
      task: str,
    })
    .nullable()
    .optional(),
  steps: z
    .array(
      z.object({
        step: z.object({ id: z.union([z.string(), z.number()]).nullable().optional(), name: str }).nullable().optional(),
        /** RUNNING while the step runs; its end (and exit) arrive in a record of their own, after the job's. */
        state: str,
        time: z.object({ end: num }).nullable().optional(),
        /** The batch step's holds the signal Slurm sent a job it ended (a TIMEOUT job: SIGNALED 15). */
        exit_code: dbExitCodeSchema,
        tres: z.object({ consumed: z.object({ total: tresListSchema }).nullable().optional() }).nullable().optional(),
        statistics: z.object({ energy: z.object({ consumed: num }).nullable().optional() }).nullable().optional(),
      }),
    )
    .nullable()
    .optional(),
});
export type DbJob = z.infer<typeof dbJobSchema>;

export const dbJobsResponseSchema = z.object({ jobs: z.array(dbJobSchema).nullable().optional() });

export const nodeSchema = z.object({
  name: z.string(),
  /** NodeAddr: where the node is reached (its name when unset); an interactive session's proxy connects there. */
  address: str,
  state: str,
  state_flags: z.array(z.string()).nullable().optional(),
  partitions: z.array(z.string()).nullable().optional(),
  gres: str,
  gres_used: str,
  tres: str,
  tres_used: str,
  cpus: num,
  alloc_cpus: num,
  reason: str,
});
export type SlurmNode = z.infer<typeof nodeSchema>;
export const nodesResponseSchema = z.object({ nodes: z.array(nodeSchema).nullable().optional() });

export const partitionSchema = z.object({
  name: z.string(),
  nodes: str,
  total_nodes: num,
  total_cpus: num,
  state: str,
  /** Minutes; INFINITE comes as a huge number or null. */
  max_time_limit: num,
  tres: str,
});
export type SlurmPartition = z.infer<typeof partitionSchema>;
export const partitionsResponseSchema = z.object({ partitions: z.array(partitionSchema).nullable().optional() });

export const accountSchema = z.object({ name: z.string(), description: str, organization: str });
export type SlurmAccount = z.infer<typeof accountSchema>;
export const accountsResponseSchema = z.object({ accounts: z.array(accountSchema).nullable().optional() });

// Association limits as slurmdbd reports them: `max.tres.group.minutes` is where GrpTRESMins lives in
// 22.05 (the spec calls it max.tres.minutes.total, which slurmrestd does not write).
const assocTresGroupSchema = z
  .object({ minutes: tresListSchema, active: tresListSchema })
  .nullable()
  .optional();
export const associationSchema = z.object({
  account: str,
  cluster: str,
  partition: str,
  user: str,
  max: z
    .object({
      tres: z.object({ group: assocTresGroupSchema, total: tresListSchema }).nullable().optional(),
    })
    .nullable()
    .optional(),
});
export type SlurmAssociation = z.infer<typeof associationSchema>;
export const associationsResponseSchema = z.object({ associations: z.array(associationSchema).nullable().optional() });
