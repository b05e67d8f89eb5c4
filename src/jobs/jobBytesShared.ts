/**
 * A job's input and results kept in a shared store (Redis, PostgreSQL) as
 * chunks, with a copy in this daemon's data directory to work on: so a job
 * accepted by one daemon is run, resumed and downloaded by any other, each
 * with its own data directory. The store is the truth; the local copy is a
 * cache.
 *
 * In the store (a `ChunkBackend`), a job file is chunks of `CHUNK_BYTES`
 * keyed by (job, file, index), chunk `i` holding bytes `[i·C, (i+1)·C)`, and
 * the file's `length` and `generation`. The generation changes whenever
 * bytes the store held are cut or overwritten (a resume cutting results
 * back to the checkpoint), so a local copy made at the same generation is a
 * valid prefix and only the tail has to be fetched.
 *
 * Locally, `<dataDir>/jobs/<jobId>/<file>.ndjson` (`jobFiles`) with
 * `<file>.generation` beside it, the store generation it is a prefix of
 * (deleted before the copy is changed in a way the store has not seen, so a
 * crash never leaves a copy that looks valid and is not). Handles on one
 * file in this process share one open copy (`LocalCopy`).
 *
 * Guarantees:
 * - `stage` writes locally; `adopt` puts the whole upload in the store
 *   before the caller writes the record, so a job with a record has its
 *   whole input in the store;
 * - `open` makes the local copy match the store first (a temporary file
 *   renamed into place when all is fetched), so a daemon never fails a job
 *   because another daemon wrote its bytes;
 * - `flush` sends what changed since the last flush (a cut, then the chunks
 *   from the first changed one) before it resolves, so a record written
 *   after it names bytes that are in the store; with a lease token, every
 *   step is refused once the token no longer holds the job's lease (checked
 *   in the same statement or script as the write), and `flush` rejects;
 *   it rejects with a `JobStoreError` (a store outage) whenever the store
 *   did not take the bytes, after a few quick retries;
 * - `sync` makes the local copy durable only: what must be in the store goes
 *   through `flush`;
 * - a job whose record is in the store and whose files are only in this
 *   data directory (the shared volume this store once needed, or jobs
 *   `migrate` imported as files) has them put in the store at its first
 *   `open` here;
 * - `remove` deletes the chunks and the local copy; `sweep` deletes what a
 *   crash left (chunks whose record never came, local copies of jobs that
 *   are gone) once older than any request could be using.
 */
import { existsSync, readFileSync, rmSync, unlinkSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import * as Effect from "effect/Effect"
import * as Schedule from "effect/Schedule"
import * as Semaphore from "effect/Semaphore"
import type { JobId } from "./Job.ts"
import { type JobBytes, type JobFile, JobStoreError, type StagedUpload } from "./JobStore.ts"
import { jobFiles, sweepOrphanFiles } from "./JobStoreFiles.ts"

/** The largest chunk: bounded, so no statement or script carries or holds more than a few of them. */
export const CHUNK_BYTES = 1024 * 1024
/** Chunks one store call carries. */
const CHUNKS_PER_CALL = 4
/** A write of a flush is tried again this many times, this far apart, before the flush fails (a blip of the store). */
const WRITE_RETRIES = 3
const WRITE_RETRY_DELAY = "250 millis"
/** Chunks or uploads older than this with no record were left by a crash. */
const ORPHAN_AGE_MS = 60 * 60 * 1000

/** A file's state in the store. */
export interface FileState {
  readonly length: number
  readonly generation: number
}

export interface Chunk {
  readonly index: number
  readonly bytes: Uint8Array
}

/** One write to a job file in the store, applied atomically. */
export interface ChunkWrite {
  /** Delete chunks from this index on first (a cut). */
  readonly dropFrom?: number | undefined
  readonly chunks: ReadonlyArray<Chunk>
  /** The file's state once written. */
  readonly state: FileState
}

/** What a shared store does with job bytes: the part each of Redis and PostgreSQL implements. */
export interface ChunkBackend {
  /** The state of the job's files (absent: never written). */
  states(jobId: string): Effect.Effect<Partial<Record<JobFile, FileState>>, unknown>
  /** Up to `count` chunks of the file from `from` on, in order (fewer at its end). */
  read(jobId: string, file: JobFile, from: number, count: number): Effect.Effect<ReadonlyArray<Chunk>, unknown>
  /** Applies `write`, unless `token` is given and no longer holds the job's lease: answers whether it did. */
  write(jobId: string, file: JobFile, token: string | undefined, write: ChunkWrite): Effect.Effect<boolean, unknown>
  /** Deletes the job's chunks and states. */
  remove(jobId: string): Effect.Effect<void, unknown>
  /** Jobs with bytes first written before `before` (epoch ms) and no record; removes nothing. */
  orphans(before: number): Effect.Effect<ReadonlyArray<string>, unknown>
  /** Whether the job has a record. */
  hasRecord(jobId: string): Effect.Effect<boolean, unknown>
}

/**
 * A flush refused because the lease it was fenced by is held no more:
 * another run has the job now. It reaches the caller as the cause of a
 * `JobStoreError`, as the store's failures do: the run stops at its last
 * checkpoint (`processJob.ts`), the job is not failed.
 */
export class LeaseLost extends Error {
  constructor(jobId: string) {
    super(`The lease of ${jobId} is held no more; its bytes were not written.`)
  }
}

const failWith =
  (operation: JobStoreError["operation"], jobId?: string) =>
  (cause: unknown): JobStoreError =>
    cause instanceof JobStoreError
      ? cause
      : new JobStoreError({ operation, ...(jobId === undefined ? {} : { jobId }), cause })

/** A synchronous file step as an effect that fails (not dies) with what it threw. */
const io = <A>(run: () => A): Effect.Effect<A, unknown> => Effect.try({ try: run, catch: (error) => error })

/** The bytes of `bytes` in `[start, end)`. */
const slice = (bytes: JobBytes, start: number, end: number): Buffer => {
  const buffer = Buffer.allocUnsafe(end - start)
  let done = 0
  while (done < buffer.length) {
    const read = bytes.read(buffer, done, buffer.length - done, start + done)
    if (read === 0) throw new Error("the local copy ended before its expected length")
    done += read
  }
  return buffer
}

/** One file's local copy, shared by this process's handles on it while any is open. */
interface LocalCopy {
  readonly jobId: string
  readonly file: JobFile
  readonly bytes: JobBytes
  refs: number
  /** The store generation the copy's first `agreed` bytes belong to. */
  generation: number
  /** Bytes the store and the copy agree on. */
  agreed: number
  /** The store's length as of the last fetch or flush. */
  storeLength: number
  /** Whether the `.generation` mark was deleted since the copy last agreed with the store. */
  unmarked: boolean
  /** Replaced by a newer copy (the store changed under changes of this one): its handles read on, it writes nothing. */
  detached: boolean
  /** The flush in progress: flushes of one copy run one after another. */
  flushing: Promise<void>
  /** The lease token of the last handle opened with one (the runner's): a handle of another lease gets a copy of its own. */
  token: string | undefined
}

/** The shared bytes of the store over `backend`, its local copies under `<dataDir>/jobs/`. */
export const makeSharedBytes = (dataDir: string, backend: ChunkBackend) =>
  Effect.gen(function* () {
    const files = jobFiles(dataDir)
    const context = yield* Effect.context<never>()
    const run = <A>(effect: Effect.Effect<A, unknown>) => Effect.runPromiseWith(context)(effect)
    const copies = new Map<string, LocalCopy>()
    const keyOf = (jobId: string, file: JobFile) => `${jobId}/${file}`
    const markPath = (jobId: string, file: JobFile) => join(files.root, jobId, `${file}.generation`)
    const filePath = (jobId: string, file: JobFile) => join(files.root, jobId, `${file}.ndjson`)
    const readMark = (jobId: string, file: JobFile): FileState | undefined => {
      try {
        const [generation, length] = readFileSync(markPath(jobId, file), "latin1").split(" ").map(Number)
        return Number.isSafeInteger(generation) && Number.isSafeInteger(length)
          ? { generation: generation!, length: length! }
          : undefined
      } catch {
        return undefined
      }
    }
    const writeMark = (jobId: string, file: JobFile, state: FileState) =>
      writeFileSync(markPath(jobId, file), `${state.generation} ${state.length}`)
    const unmark = (jobId: string, file: JobFile) => {
      try {
        unlinkSync(markPath(jobId, file))
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error
      }
    }
    const locks = new Map<string, Semaphore.Semaphore>()
    const locked = <A, E>(key: string, effect: Effect.Effect<A, E>) =>
      Effect.suspend(() => {
        let lock = locks.get(key)
        if (lock === undefined) {
          lock = Semaphore.makeUnsafe(1)
          locks.set(key, lock)
        }
        return lock.withPermit(effect)
      })

    /** Appends the store's bytes `[from, to)` of the file to `bytes` (which holds `from` bytes). */
    const fetchInto = (jobId: string, file: JobFile, bytes: JobBytes, from: number, to: number) =>
      Effect.gen(function* () {
        let at = from
        while (at < to) {
          const chunks = yield* backend.read(jobId, file, Math.floor(at / CHUNK_BYTES), CHUNKS_PER_CALL)
          if (chunks.length === 0) break
          for (const chunk of chunks) {
            const start = chunk.index * CHUNK_BYTES
            const end = Math.min(to, start + chunk.bytes.length)
            if (end <= at) continue
            if (start > at) return yield* Effect.fail(new Error(`chunk ${chunk.index} of ${file} is missing`))
            const from = at
            yield* io(() => bytes.write(chunk.bytes, from - start, end - from, from))
            at = end
          }
        }
        if (at < to) return yield* Effect.fail(new Error(`the store holds ${at} of the ${to} bytes of ${file}`))
      })

    /** Makes the local copy of the file match `state`, no copy being open; answers the copy's bytes. */
    const prepare = (jobId: JobId, file: JobFile, state: FileState) =>
      Effect.gen(function* () {
        const mark = readMark(jobId, file)
        const kept =
          mark?.generation === state.generation ? yield* Effect.option(io(() => files.open(jobId, file))) : undefined
        if (kept !== undefined && kept._tag === "Some") {
          const bytes = kept.value
          const have = yield* io(() => {
            const size = bytes.size()
            const valid = Math.min(size, mark!.length, state.length)
            if (size > valid) bytes.truncate(valid)
            return valid
          })
          if (have < state.length) {
            yield* fetchInto(jobId, file, bytes, have, state.length).pipe(
              Effect.onError(() => Effect.sync(() => bytes.close()))
            )
          }
          if (have !== mark!.length || have < state.length) yield* io(() => writeMark(jobId, file, state))
          return bytes
        }
        // No valid copy: the whole file, into a temporary file moved into place once complete.
        yield* io(() => unmark(jobId, file))
        const upload = yield* io(files.stage)
        yield* fetchInto(jobId, file, upload.bytes, 0, state.length).pipe(
          Effect.onError(() => Effect.sync(() => files.discard(upload)))
        )
        return yield* io(() => {
          files.place(jobId, upload, file)
          writeMark(jobId, file, state)
          return files.open(jobId, file)
        })
      })

    /** Sends what changed in the copy since it last agreed with the store. */
    const flushCopy = (copy: LocalCopy, token: string | undefined): Promise<void> => {
      const step = copy.flushing.then(() =>
        run(
          Effect.gen(function* () {
            const size = yield* io(() => copy.bytes.size())
            if (copy.agreed >= size && copy.storeLength === size) return
            if (copy.detached) return yield* Effect.fail(new LeaseLost(copy.jobId))
            const cut = copy.agreed < copy.storeLength
            const generation = cut ? copy.generation + 1 : copy.generation
            const first = Math.floor(Math.min(copy.agreed, size) / CHUNK_BYTES)
            const last = size === 0 ? -1 : Math.floor((size - 1) / CHUNK_BYTES)
            let dropFrom: number | undefined = cut ? last + 1 : undefined
            for (let index = first; index <= last || dropFrom !== undefined; index += CHUNKS_PER_CALL) {
              const chunks: Array<Chunk> = []
              for (let i = index; i < index + CHUNKS_PER_CALL && i <= last; i++) {
                const start = i * CHUNK_BYTES
                chunks.push({
                  index: i,
                  bytes: yield* io(() => slice(copy.bytes, start, Math.min(size, start + CHUNK_BYTES)))
                })
              }
              const length = chunks.length === 0 ? size : Math.min(size, (index + chunks.length) * CHUNK_BYTES)
              const written = yield* backend
                .write(copy.jobId, copy.file, token, { dropFrom, chunks, state: { length, generation } })
                .pipe(Effect.retry({ times: WRITE_RETRIES, schedule: Schedule.spaced(WRITE_RETRY_DELAY) }))
              if (!written) return yield* Effect.fail(new LeaseLost(copy.jobId))
              dropFrom = undefined
              copy.generation = generation
              copy.storeLength = length
              copy.agreed = length
            }
            copy.agreed = size
            copy.storeLength = size
            try {
              writeMark(copy.jobId, copy.file, { generation, length: size })
              copy.unmarked = false
            } catch {
              // The job's directory is gone (removed meanwhile): the copy is no longer kept.
            }
          })
        ).catch((error: unknown) => {
          // Whatever stopped the write (a failure, or a transaction's rollback that died), as the store's error.
          throw failWith("write", copy.jobId)(error)
        })
      )
      copy.flushing = step.catch(() => undefined)
      return step
    }

    /** A handle on the shared copy, its flushes fenced by `token` when given; closing the last one closes the copy (the file stays, a cache). */
    const handle = (copy: LocalCopy, token: string | undefined): JobBytes => {
      let closed = false
      const live = () => {
        if (closed) throw new Error("the job file is closed")
        return copy.bytes
      }
      /** Before a change below what the store holds: the copy no longer matches its mark. */
      const changing = (position: number) => {
        if (position < copy.storeLength && !copy.unmarked && !copy.detached) {
          unmark(copy.jobId, copy.file)
          copy.unmarked = true
        }
        copy.agreed = Math.min(copy.agreed, position)
      }
      return {
        size: () => live().size(),
        read: (buffer, offset, length, position) => live().read(buffer, offset, length, position),
        write: (buffer, offset, length, position) => {
          const bytes = live()
          changing(position)
          bytes.write(buffer, offset, length, position)
        },
        writeParts: (parts, position) => {
          const bytes = live()
          changing(position)
          return bytes.writeParts(parts, position)
        },
        truncate: (length) => {
          const bytes = live()
          changing(length)
          bytes.truncate(length)
        },
        sync: () => live().sync(),
        flush: () => {
          try {
            live()
          } catch (error) {
            return Promise.reject(error)
          }
          return flushCopy(copy, token)
        },
        close: () => {
          live()
          closed = true
          if (--copy.refs > 0) return
          if (copies.get(keyOf(copy.jobId, copy.file)) === copy) copies.delete(keyOf(copy.jobId, copy.file))
          copy.bytes.close()
        }
      }
    }

    const share = (copy: LocalCopy, token: string | undefined) => {
      copy.refs++
      if (token !== undefined) copy.token = token
      return handle(copy, token)
    }

    /** One of the job's files, its local copy matching the store; writes fenced by `token` when given. */
    const open = (jobId: JobId, file: JobFile, token?: string) =>
      locked(
        keyOf(jobId, file),
        Effect.gen(function* () {
          let states = yield* backend.states(jobId)
          if (states.input === undefined && (yield* importLocal(jobId))) states = yield* backend.states(jobId)
          if (states.input === undefined) {
            const gone = Object.assign(new Error(`job ${jobId} has no input in the store`), { code: "ENOENT" })
            return yield* Effect.fail(gone)
          }
          const state = states[file] ?? { length: 0, generation: 0 }
          const key = keyOf(jobId, file)
          const open = copies.get(key)
          if (open !== undefined) {
            const size = yield* io(() => open.bytes.size())
            const unchanged = open.agreed >= size && open.storeLength === size
            // A new lease on a job this daemon ran under an older one (it lost it, then took the job again): a fresh copy.
            const same =
              open.generation === state.generation &&
              (token === undefined || open.token === undefined || open.token === token)
            if (same && open.storeLength === state.length) return share(open, token)
            if (same && unchanged && state.length > size) {
              // Grown by another daemon since: the tail alone, for every handle open here.
              yield* fetchInto(jobId, file, open.bytes, size, state.length)
              open.agreed = open.storeLength = state.length
              yield* io(() => writeMark(jobId, file, state))
              return share(open, token)
            }
            // Cut by another daemon, changed both here and there, or another lease: the handles open here keep the old copy, unlinked.
            open.detached = true
            copies.delete(key)
            yield* io(() => {
              unmark(jobId, file)
              rmSync(filePath(jobId, file), { force: true })
            })
          }
          const bytes = yield* prepare(jobId, file, state)
          const copy: LocalCopy = {
            jobId,
            file,
            bytes,
            refs: 1,
            generation: state.generation,
            agreed: state.length,
            storeLength: state.length,
            unmarked: false,
            detached: false,
            flushing: Promise.resolve(),
            token
          }
          copies.set(key, copy)
          return handle(copy, token)
        })
      ).pipe(
        Effect.catchDefect((defect) => Effect.fail(defect)),
        Effect.mapError(failWith("open", jobId))
      )

    /** Writes all of `bytes` as the job's `file` in the store, unfenced (a file no lease holder writes yet). */
    const send = (jobId: string, file: JobFile, bytes: JobBytes) =>
      Effect.gen(function* () {
        const size = yield* io(() => bytes.size())
        const last = size === 0 ? -1 : Math.floor((size - 1) / CHUNK_BYTES)
        for (let index = 0; index <= last || index === 0; index += CHUNKS_PER_CALL) {
          const chunks: Array<Chunk> = []
          for (let i = index; i < index + CHUNKS_PER_CALL && i <= last; i++) {
            const start = i * CHUNK_BYTES
            chunks.push({ index: i, bytes: yield* io(() => slice(bytes, start, Math.min(size, start + CHUNK_BYTES))) })
          }
          const length = Math.min(size, (index + chunks.length) * CHUNK_BYTES)
          yield* backend.write(jobId, file, undefined, { chunks, state: { length, generation: 0 } })
        }
        return size
      })

    /** Puts the staged upload in the store as the job's input, then keeps it as the local copy; on failure, nothing stays. */
    const adopt = (jobId: JobId, upload: StagedUpload) =>
      Effect.gen(function* () {
        const size = yield* send(jobId, "input", upload.bytes)
        yield* io(() => {
          files.adopt(jobId, upload)
          writeMark(jobId, "input", { generation: 0, length: size })
        })
      }).pipe(
        Effect.onError(() =>
          Effect.andThen(
            Effect.sync(() => files.discard(upload)),
            Effect.ignore(backend.remove(jobId))
          )
        ),
        Effect.mapError(failWith("create", jobId))
      )

    /**
     * A job whose record is in the store and whose files are only here (a
     * data directory of the shared volume this store once needed, or jobs
     * `migrate` imported from files): its files are put in the store, as
     * they are, so it is served, resumed and downloaded by any daemon.
     * Answers whether there was such a job.
     */
    const importLocal = (jobId: JobId) =>
      Effect.gen(function* () {
        if (readMark(jobId, "input") !== undefined) return false
        const input = yield* Effect.option(io(() => files.open(jobId, "input")))
        if (input._tag === "None") return false
        const bytes = input.value
        return yield* Effect.gen(function* () {
          if (!(yield* backend.hasRecord(jobId))) return false
          const results = existsSync(filePath(jobId, "results")) ? files.open(jobId, "results") : undefined
          if (results !== undefined) {
            const length = yield* send(jobId, "results", results).pipe(
              Effect.ensuring(Effect.sync(() => results.close()))
            )
            yield* io(() => writeMark(jobId, "results", { generation: 0, length }))
          }
          const length = yield* send(jobId, "input", bytes)
          yield* io(() => writeMark(jobId, "input", { generation: 0, length }))
          yield* Effect.logInfo("a job's files were put in the store from this data directory", { jobId })
          return true
        }).pipe(Effect.ensuring(Effect.sync(() => bytes.close())))
      })

    const remove = (jobId: JobId) =>
      Effect.andThen(
        backend.remove(jobId),
        io(() => {
          for (const file of ["input", "results"] as const) {
            copies.delete(keyOf(jobId, file))
            locks.delete(keyOf(jobId, file))
          }
          files.remove(jobId)
        })
      ).pipe(Effect.mapError(failWith("remove", jobId)))

    /** Chunks of jobs whose record never came, and local copies and uploads of jobs that are gone. */
    const sweep = Effect.gen(function* () {
      const orphans = yield* backend.orphans(Date.now() - ORPHAN_AGE_MS)
      for (const jobId of orphans) yield* backend.remove(jobId)
      yield* sweepOrphanFiles(files, backend.hasRecord)
    }).pipe(Effect.mapError(failWith("remove")))

    return {
      stage: () => Effect.mapError(io(files.stage), failWith("stage")),
      discard: (upload: StagedUpload) => Effect.ignore(Effect.sync(() => files.discard(upload))),
      adopt,
      open,
      remove,
      sweep
    }
  })

export type SharedBytes = Effect.Success<ReturnType<typeof makeSharedBytes>>
