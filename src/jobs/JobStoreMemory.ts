/**
 * The job store's memory adapter: records, inputs and results in the
 * process, for the library and tests. Records are kept encoded, so what is
 * read back went through the same schema as with the file adapter. Nothing
 * survives the process; within it, every guarantee of the port holds.
 */
import { randomBytes } from "node:crypto"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import { Job, type JobId } from "./Job.ts"
import { type JobBytes, JobStore, JobStoreError, type StagedUpload } from "./JobStore.ts"

/** The bytes of one file: a buffer that grows as it is written, of which the first `length` count. */
class MemoryFile {
  data: Buffer = Buffer.alloc(0)
  length = 0
}

/** An open handle on a `MemoryFile`; each `open` gets its own, as with file descriptors. */
export class MemoryBytes implements JobBytes {
  private readonly file: MemoryFile
  private closed = false

  constructor(file: MemoryFile = new MemoryFile()) {
    this.file = file
  }

  size(): number {
    return this.open().length
  }

  read(buffer: Uint8Array, offset: number, length: number, position: number): number {
    const file = this.open()
    const end = Math.min(file.length, position + length)
    if (end <= position) return 0
    file.data.copy(buffer, offset, position, end)
    return end - position
  }

  write(buffer: Uint8Array, offset: number, length: number, position: number): void {
    const file = this.open()
    this.reserve(position + length)
    if (position > file.length) file.data.fill(0, file.length, position)
    file.data.set(buffer.subarray(offset, offset + length), position)
    file.length = Math.max(file.length, position + length)
  }

  writeParts(parts: ReadonlyArray<Uint8Array>, position: number): number {
    let at = position
    for (const part of parts) {
      this.write(part, 0, part.length, at)
      at += part.length
    }
    return at - position
  }

  truncate(length: number): void {
    const file = this.open()
    if (length > file.length) {
      this.reserve(length)
      file.data.fill(0, file.length, length)
    }
    file.length = length
  }

  sync(): void {
    this.open()
  }

  flush(): Promise<void> {
    this.open()
    return Promise.resolve()
  }

  close(): void {
    this.closed = true
  }

  /** Another handle on the same bytes. */
  reopen(): MemoryBytes {
    return new MemoryBytes(this.file)
  }

  private reserve(size: number): void {
    const file = this.file
    if (size <= file.data.length) return
    const grown = Buffer.alloc(Math.max(size, file.data.length * 2, 4096))
    file.data.copy(grown, 0, 0, file.length)
    file.data = grown
  }

  private open(): MemoryFile {
    if (this.closed) throw new Error("The job file is closed.")
    return this.file
  }
}

interface StoredJob {
  record: string
  readonly input: MemoryBytes
  readonly results: MemoryBytes
}

export const layerMemory: Layer.Layer<JobStore> = Layer.sync(JobStore, () => {
  const jobs = new Map<string, StoredJob>()
  const staged = new Set<string>()
  const encode = Schema.encodeSync(Schema.fromJsonString(Job))
  const decode = Schema.decodeUnknownSync(Schema.fromJsonString(Job))
  const missing = (operation: JobStoreError["operation"], jobId: string) =>
    new JobStoreError({ operation, jobId, cause: new Error(`There is no job ${jobId}.`) })
  return JobStore.of({
    stage: () =>
      Effect.sync((): StagedUpload => {
        const id = randomBytes(8).toString("hex")
        staged.add(id)
        return { id, bytes: new MemoryBytes() }
      }),
    discard: (upload) =>
      Effect.sync(() => {
        staged.delete(upload.id)
        upload.bytes.close()
      }),
    create: (job, upload) =>
      Effect.suspend(() => {
        if (!staged.delete(upload.id)) {
          return Effect.fail(
            new JobStoreError({ operation: "create", jobId: job.jobId, cause: new Error("The upload is not staged.") })
          )
        }
        const input = (upload.bytes as MemoryBytes).reopen()
        upload.bytes.close()
        jobs.set(job.jobId, { record: encode(job), input, results: new MemoryBytes() })
        return Effect.void
      }),
    open: (jobId, file) =>
      Effect.suspend(() => {
        const stored = jobs.get(jobId)
        return stored === undefined ? Effect.fail(missing("open", jobId)) : Effect.succeed(stored[file].reopen())
      }),
    read: (jobId: JobId) => Effect.sync(() => mapRecord(jobs.get(jobId), decode)),
    write: (job) =>
      Effect.suspend(() => {
        const stored = jobs.get(job.jobId)
        if (stored === undefined) return Effect.fail(missing("write", job.jobId))
        stored.record = encode(job)
        return Effect.void
      }),
    list: () => Effect.sync(() => [...jobs.values()].map((stored) => decode(stored.record))),
    remove: (jobId) => Effect.sync(() => void jobs.delete(jobId))
  })
})

const mapRecord = (stored: StoredJob | undefined, decode: (text: string) => Job): Job | undefined =>
  stored === undefined ? undefined : decode(stored.record)
