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
import { type JobFiles, jobFiles, jobsDirectory, uploadPath } from "./jobFiles.ts"

/** A file-system step as the store's typed failure. */
const attempt = <A>(operation: JobStoreError["operation"], jobId: string | undefined, run: () => A) =>
  Effect.try({
    try: run,
    catch: (cause) => new JobStoreError({ operation, ...(jobId === undefined ? {} : { jobId }), cause })
  })

/** How a new job's input arrives: written by the caller into the job's file, or a finished file moved in. */
export type JobInput =
  | { readonly _tag: "Write"; readonly write: (inputPath: string) => void }
  | { readonly _tag: "Move"; readonly path: string }

/** The store could not do what was asked (a full disk, a read-only or broken volume); nothing was changed. */
export class JobStoreError extends Schema.TaggedError<JobStoreError>()("JobStoreError", {
  operation: Schema.Literals(["stage", "upload", "create", "read", "write", "list", "remove"]),
  jobId: Schema.optionalKey(Schema.String),
  cause: Schema.Defect()
}) {
  override get message(): string {
    const code = (this.cause as NodeJS.ErrnoException | undefined)?.code
    return `The job store failed to ${this.operation}${this.jobId === undefined ? "" : ` ${this.jobId}`}${code === undefined ? "" : ` (${code})`}`
  }
}

export class JobStore extends Context.Service<
  JobStore,
  {
    /** The files of a job (input, results, record). */
    files(jobId: JobId): JobFiles
    /** A fresh place for an upload being read before its job exists; it becomes a job's input (`Move`) or is discarded. */
    stage(): Effect.Effect<string, JobStoreError>
    /** Removes a staged upload that became no job. */
    discard(path: string): Effect.Effect<void>
    /** Creates the job's directory and input durably, then its record. */
    create(job: Job, input: JobInput): Effect.Effect<void, JobStoreError>
    read(jobId: JobId): Effect.Effect<Job | undefined, JobStoreError>
    /** Replaces the job's record atomically. */
    write(job: Job): Effect.Effect<void, JobStoreError>
    /** Every job with a readable record; cleans up what a crash left behind. */
    list(): Effect.Effect<ReadonlyArray<Job>, JobStoreError>
    /** Deletes the job with its files, durably. */
    remove(jobId: JobId): Effect.Effect<void, JobStoreError>
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
        stage: () => attempt("stage", undefined, () => uploadPath(dataDir)),
        discard: (path) => Effect.sync(() => rmSync(path, { force: true })).pipe(Effect.ignore),
        create: (job, input) =>
          attempt("create", job.jobId, () => {
            const { directory, input: inputPath } = files(job.jobId)
            mkdirSync(directory, { recursive: true })
            if (input._tag === "Write") input.write(inputPath)
            else renameSync(input.path, inputPath)
            fsyncPath(inputPath)
            writeFileAtomic(files(job.jobId).record, encode(job))
            fsyncPath(root)
          }),
        read: (jobId) => attempt("read", jobId, () => readRecord(jobId)),
        write: (job) => attempt("write", job.jobId, () => writeFileAtomic(files(job.jobId).record, encode(job))),
        list: () =>
          Effect.gen(function* () {
            const names = yield* attempt("list", undefined, () => {
              mkdirSync(root, { recursive: true })
              return readdirSync(root)
            })
            const jobs: Array<Job> = []
            for (const name of names) {
              if (name.startsWith(".")) {
                yield* attempt("list", undefined, () => rmSync(join(root, name), { recursive: true, force: true }))
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
              if (job === undefined) yield* attempt("remove", name, () => removeDirectory(name))
              else jobs.push(job)
            }
            return jobs
          }),
        remove: (jobId) => attempt("remove", jobId, () => removeDirectory(jobId))
      })
    })
}
