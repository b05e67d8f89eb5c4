/**
 * Where jobs live: the port the queue uses, and its file adapter over the
 * layout of `jobFiles.ts`. A job directory becomes visible only with its
 * `job.json`, which is written after `input.ndjson` is flushed to disk, so a
 * job that `create` returned survives any crash; a directory a crash left
 * without a record is removed at `list` (one with an unreadable record is
 * logged and left alone). `remove` first renames the directory
 * to a hidden name and flushes that, so a crash mid-delete never leaves a
 * half-deleted job that looks alive.
 *
 * The port keeps records apart from the bulk files so a shared adapter can
 * replace it when the daemon scales out: records in Redis (effect/persistence
 * speaks it), input and results on a volume every replica mounts.
 */
import { randomBytes } from "node:crypto"
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync } from "node:fs"
import { join } from "node:path"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import { fsyncPath, writeFileAtomic } from "../store/atomicWrite.ts"
import { isJobId, Job, type JobId } from "./Job.ts"
import { type JobFiles, jobFiles, jobsDirectory } from "./jobFiles.ts"

/** How a new job's input arrives: written by the caller into the job's file, or a finished file moved in. */
export type JobInput =
  | { readonly _tag: "Write"; readonly write: (inputPath: string) => void }
  | { readonly _tag: "Move"; readonly path: string }

export class JobStore extends Context.Service<
  JobStore,
  {
    /** The files of a job (input, results, record). */
    files(jobId: JobId): JobFiles
    /** Creates the job's directory and input durably, then its record. */
    create(job: Job, input: JobInput): Effect.Effect<void>
    read(jobId: JobId): Effect.Effect<Job | undefined>
    /** Replaces the job's record atomically. */
    write(job: Job): Effect.Effect<void>
    /** Every job with a readable record; cleans up what a crash left behind. */
    list(): Effect.Effect<ReadonlyArray<Job>>
    /** Deletes the job with its files, durably. */
    remove(jobId: JobId): Effect.Effect<void>
  }
>()("campusgate/jobs/JobStore") {
  static readonly layerFiles = (dataDir: string): Layer.Layer<JobStore> =>
    Layer.sync(JobStore, () => {
      const root = jobsDirectory(dataDir)
      const files = (jobId: JobId) => jobFiles(dataDir, jobId)
      const encode = Schema.encodeSync(Schema.fromJsonString(Job))
      const decode = Schema.decodeUnknownSync(Schema.fromJsonString(Job))
      const readRecord = (jobId: JobId): Job | undefined => {
        let text: string
        try {
          text = readFileSync(files(jobId).record, "utf8")
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined
          throw error
        }
        return decode(text)
      }
      const removeDirectory = (jobId: string) => {
        const hidden = join(root, `.${jobId}.${randomBytes(4).toString("hex")}.deleted`)
        try {
          renameSync(join(root, jobId), hidden)
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code === "ENOENT") return
          throw error
        }
        fsyncPath(root)
        rmSync(hidden, { recursive: true, force: true })
      }
      return JobStore.of({
        files,
        create: (job, input) =>
          Effect.sync(() => {
            const { directory, input: inputPath } = files(job.jobId)
            mkdirSync(directory, { recursive: true })
            if (input._tag === "Write") input.write(inputPath)
            else renameSync(input.path, inputPath)
            fsyncPath(inputPath)
            writeFileAtomic(files(job.jobId).record, encode(job))
            fsyncPath(root)
          }),
        read: (jobId) => Effect.sync(() => readRecord(jobId)),
        write: (job) => Effect.sync(() => writeFileAtomic(files(job.jobId).record, encode(job))),
        list: () =>
          Effect.gen(function* () {
            mkdirSync(root, { recursive: true })
            const jobs: Array<Job> = []
            for (const name of readdirSync(root)) {
              if (name.startsWith(".")) {
                rmSync(join(root, name), { recursive: true, force: true })
                continue
              }
              if (!isJobId(name)) continue
              let job: Job | undefined
              try {
                job = readRecord(name)
              } catch (error) {
                // Kept on disk for a person to look at; the queue goes on without it.
                yield* Effect.logWarning("a job record cannot be read; the job is left alone", {
                  file: `jobs/${name}/job.json`,
                  error: String(error)
                })
                continue
              }
              if (job === undefined) removeDirectory(name)
              else jobs.push(job)
            }
            return jobs
          }),
        remove: (jobId) => Effect.sync(() => removeDirectory(jobId))
      })
    })
}
