/**
 * The job store's file adapter: `<dataDir>/jobs/<jobId>/` holds
 * - `input.ndjson`: one line per input item, in input order (`inputLines.ts`);
 * - `results.ndjson`: one `rowText(row)` line per input item, in input order;
 * - `job.json`: the job record, replaced atomically (`*.tmp` leftovers are
 *   ignored).
 *
 * A job directory becomes visible only with its `job.json`, which is written
 * after `input.ndjson` is flushed to disk, so a job that `create` returned
 * survives any crash. Uploads are staged as hidden files under `jobs/` (on
 * the same file system, so they are moved in by `rename`); hidden names are
 * removed at `list`, as is a directory a crash left without a record (one
 * with an unreadable record is logged and left alone). `remove` first renames
 * the directory to a hidden name and flushes that, so a crash mid-delete
 * never leaves a half-deleted job that looks alive.
 */
import { randomBytes } from "node:crypto"
import {
  closeSync,
  constants,
  fstatSync,
  fsync,
  fsyncSync,
  ftruncateSync,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
  renameSync,
  rmSync,
  statSync,
  writeSync,
  writevSync
} from "node:fs"
import { join } from "node:path"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import {
  ensureDirectory,
  ensurePrivateDirectory,
  fsyncPath,
  PRIVATE_FILE,
  writeFileAtomic,
  writeFileAtomicAsync
} from "../store/atomicWrite.ts"
import { isJobId, Job, type JobId } from "./Job.ts"
import { type JobBytes, type JobFile, JobStore, JobStoreError, type StagedUpload } from "./JobStore.ts"

const fileNames: Record<JobFile, string> = { input: "input.ndjson", results: "results.ndjson" }
const RECORD_FILE = "job.json"

export const jobsDirectory = (dataDir: string): string => join(dataDir, "jobs")

/** Where a job's file is, for tests and tools that look at the directory itself. */
export const jobFilePath = (dataDir: string, jobId: string, file: JobFile | "record"): string =>
  join(jobsDirectory(dataDir), jobId, file === "record" ? RECORD_FILE : fileNames[file])

/** A file-system step as the store's typed failure. */
const attempt = <A>(operation: JobStoreError["operation"], jobId: string | undefined, run: () => A) =>
  Effect.try({
    try: run,
    catch: (cause) => new JobStoreError({ operation, ...(jobId === undefined ? {} : { jobId }), cause })
  })

/** An open file as `JobBytes`. */
class FileBytes implements JobBytes {
  readonly fd: number
  constructor(fd: number) {
    this.fd = fd
  }
  size(): number {
    return fstatSync(this.fd).size
  }
  read(buffer: Uint8Array, offset: number, length: number, position: number): number {
    return readSync(this.fd, buffer, offset, length, position)
  }
  write(buffer: Uint8Array, offset: number, length: number, position: number): void {
    for (let done = 0; done < length; ) {
      done += writeSync(this.fd, buffer, offset + done, length - done, position + done)
    }
  }
  writeParts(parts: ReadonlyArray<Uint8Array>, position: number): number {
    let written = parts.length === 0 ? 0 : writevSync(this.fd, parts as Array<Uint8Array>, position)
    let at = position
    for (const part of parts) {
      // What the vectored write left of this part, if anything (a short write: rare on a file).
      const skip = Math.min(written, part.length)
      written -= skip
      if (skip < part.length) this.write(part, skip, part.length - skip, at + skip)
      at += part.length
    }
    return at - position
  }
  truncate(length: number): void {
    ftruncateSync(this.fd, length)
  }
  sync(): void {
    fsyncSync(this.fd)
  }
  flush(): Promise<void> {
    return new Promise((resolve, reject) => fsync(this.fd, (error) => (error === null ? resolve() : reject(error))))
  }
  close(): void {
    closeSync(this.fd)
  }
}

interface StagedFile extends StagedUpload {
  readonly path: string
}

/**
 * The byte half of the store over `<dataDir>/jobs/`: staged uploads, a
 * job's directory with its input and results, and its removal. The file
 * adapter keeps the record beside them (`job.json`); the Redis and
 * PostgreSQL adapters keep the bytes in their store and this daemon's copy
 * here (`jobBytesShared.ts`).
 */
export const jobFiles = (dataDir: string) => {
  const root = jobsDirectory(dataDir)
  const directoryOf = (jobId: string) => join(root, jobId)
  const closeQuietly = (bytes: JobBytes) => {
    try {
      bytes.close()
    } catch {
      // Already closed, or the descriptor is gone: nothing is left to release.
    }
  }
  return {
    root,
    /** A fresh hidden upload file under `jobs/` (the same file system, so it is moved in by `rename`). */
    stage: (): StagedUpload => {
      ensurePrivateDirectory(root)
      const path = join(root, `.upload-${randomBytes(8).toString("hex")}.tmp`)
      return { id: path, path, bytes: new FileBytes(openSync(path, "wx+", PRIVATE_FILE)) } as StagedFile
    },
    discard: (upload: StagedUpload): void => {
      closeQuietly(upload.bytes)
      rmSync((upload as StagedFile).path, { force: true })
    },
    /** Makes the staged upload `jobs/<jobId>/input.ndjson`, durably; on failure the upload is removed. */
    adopt: (jobId: string, upload: StagedUpload): void => {
      const staged = upload as StagedFile
      try {
        staged.bytes.sync()
        closeQuietly(staged.bytes)
        ensureDirectory(directoryOf(jobId))
        renameSync(staged.path, join(directoryOf(jobId), fileNames.input))
        fsyncPath(directoryOf(jobId))
      } catch (error) {
        rmSync(staged.path, { force: true })
        throw error
      }
    },
    /** Makes a complete download the job's `file` (a copy of what a shared store holds: not flushed, the store is the truth). */
    place: (jobId: string, upload: StagedUpload, file: JobFile): void => {
      const staged = upload as StagedFile
      try {
        closeQuietly(staged.bytes)
        ensureDirectory(directoryOf(jobId))
        renameSync(staged.path, join(directoryOf(jobId), fileNames[file]))
      } catch (error) {
        rmSync(staged.path, { force: true })
        throw error
      }
    },
    open: (jobId: string, file: JobFile): JobBytes => {
      const path = join(directoryOf(jobId), fileNames[file])
      const flags = file === "input" ? constants.O_RDONLY : constants.O_RDWR | constants.O_CREAT
      return new FileBytes(openSync(path, flags, PRIVATE_FILE))
    },
    /** Renames the job's directory to a hidden name, flushes that, then deletes it: never half-deleted and alive. */
    remove: (jobId: string): void => {
      const hidden = join(root, `.${jobId}.${randomBytes(4).toString("hex")}.deleted`)
      try {
        renameSync(directoryOf(jobId), hidden)
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === "ENOENT") return
        throw error
      }
      fsyncPath(root)
      rmSync(hidden, { recursive: true, force: true })
    }
  }
}

/** Files older than this with no record (or uploads never finished) are left behind by a crash. */
const ORPHAN_AGE_MS = 60 * 60 * 1000

/**
 * For a store that keeps records elsewhere (Redis, PostgreSQL) and copies
 * of the bytes under `files.root`: removes the job directories whose record
 * never came or is gone (a crash in between, a job removed by another
 * daemon) and the uploads left behind, once older than any request could
 * still be using them.
 */
export const sweepOrphanFiles = <E>(
  files: ReturnType<typeof jobFiles>,
  hasRecord: (jobId: string) => Effect.Effect<boolean, E>
): Effect.Effect<void, E | JobStoreError> =>
  Effect.gen(function* () {
    const names = yield* attempt("list", undefined, () => {
      try {
        return readdirSync(files.root)
      } catch {
        return []
      }
    })
    const now = Date.now()
    const old = (name: string) => {
      try {
        return now - statSync(join(files.root, name)).mtimeMs > ORPHAN_AGE_MS
      } catch {
        return false
      }
    }
    for (const name of names) {
      if (name.startsWith(".")) {
        if (old(name))
          yield* attempt("remove", undefined, () => rmSync(join(files.root, name), { recursive: true, force: true }))
        continue
      }
      if (!isJobId(name) || !old(name)) continue
      if (!(yield* hasRecord(name))) yield* attempt("remove", name, () => files.remove(name))
    }
  })

export const layerFiles = (dataDir: string): Layer.Layer<JobStore> =>
  Layer.sync(JobStore, () => {
    const files = jobFiles(dataDir)
    const { root } = files
    const recordOf = (jobId: string) => join(root, jobId, RECORD_FILE)
    const encode = Schema.encodeSync(Schema.fromJsonString(Job))
    const decode = Schema.decodeUnknownSync(Schema.fromJsonString(Job))
    const readRecord = (jobId: JobId): Job | undefined => {
      let text: string
      try {
        text = readFileSync(recordOf(jobId), "utf8")
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined
        throw error
      }
      return decode(text)
    }
    return JobStore.of({
      stage: () => attempt("stage", undefined, files.stage),
      discard: (upload) => Effect.sync(() => files.discard(upload)).pipe(Effect.ignore),
      create: (job, upload) =>
        attempt("create", job.jobId, () => {
          files.adopt(job.jobId, upload)
          writeFileAtomic(recordOf(job.jobId), encode(job))
          fsyncPath(root)
        }),
      open: (jobId, file) => attempt("open", jobId, () => files.open(jobId, file)),
      read: (jobId) => attempt("read", jobId, () => readRecord(jobId)),
      // Off the calling thread: a running job writes its record at every checkpoint.
      write: (job) =>
        Effect.tryPromise({
          try: () => writeFileAtomicAsync(recordOf(job.jobId), encode(job)),
          catch: (cause) => new JobStoreError({ operation: "write", jobId: job.jobId, cause })
        }),
      list: () =>
        Effect.gen(function* () {
          const names = yield* attempt("list", undefined, () => {
            ensurePrivateDirectory(root)
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
                file: `jobs/${name}/${RECORD_FILE}`,
                error: String(error)
              })
              continue
            }
            if (job === undefined) yield* attempt("remove", name, () => files.remove(name))
            else jobs.push(job)
          }
          return jobs
        }),
      remove: (jobId) => attempt("remove", jobId, () => files.remove(jobId))
    })
  })
