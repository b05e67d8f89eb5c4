/**
 * The verification store's file adapter: `<dataDir>/verifications/journal.ndjson`,
 * one JSON line per change (`{"r": record}` for a record's new version,
 * `{"d": id}` for a removal), replayed into memory at start (the last line
 * of an id wins).
 *
 * Durability: a change counts once its line is written and fsync'd. Lines
 * appended while the previous batch is being fsync'd (off the event loop)
 * go out together in one write and one fsync (group commit), so 64
 * concurrent requests cost a few fsyncs, not 64
 * (an fsync is ~0.2-0.3 ms on this project's machines; `npm run
 * bench:verifications` measures the whole start request). A crash can leave
 * a torn last line, which is cut off at start; a damaged line before the
 * last stops the load with its line number instead of being overwritten.
 *
 * The journal is compacted — rewritten atomically with the live records
 * only (`writeFileAtomic`) — at start and whenever it has grown to twice
 * the live records plus 10,000 lines.
 */
import { closeSync, fchmodSync, fstatSync, fsync, ftruncateSync, openSync, readFileSync, writeSync } from "node:fs"
import { join } from "node:path"
import * as Schema from "effect/Schema"
import { VerificationRecord } from "../domain/Verification.ts"
import { ensurePrivateDirectory, fsyncPath, PRIVATE_FILE, writeFileAtomic } from "../store/atomicWrite.ts"
import { RecordIndex } from "./recordIndex.ts"

/** A journal line: a record's new version, or the removal of one. */
export type JournalLine = { readonly r: VerificationRecord } | { readonly d: string }

export const VERIFICATIONS_DIR = "verifications"
const JOURNAL_FILE = "journal.ndjson"
const COMPACT_SLACK_LINES = 10_000

const decodeLine = Schema.decodeUnknownSync(
  Schema.fromJsonString(Schema.Union([Schema.Struct({ r: VerificationRecord }), Schema.Struct({ d: Schema.String })]))
)
const encodeRecord = Schema.encodeSync(VerificationRecord)

const lineText = (line: JournalLine): string =>
  "r" in line ? `${JSON.stringify({ r: encodeRecord(line.r) })}\n` : `${JSON.stringify(line)}\n`

export interface Journal {
  readonly index: RecordIndex
  /** Resolves once `line` is durable (with the other lines of this turn). */
  append(line: JournalLine): Promise<void>
  /** Writes what is pending and closes the file. */
  close(): Promise<void>
}

interface Pending {
  readonly text: string
  readonly resolve: () => void
  readonly reject: (error: unknown) => void
}

/** Reads the journal into an index (cutting off a torn last line) and opens it for appending. */
export const openJournal = (dataDir: string): Journal => {
  const directory = join(dataDir, VERIFICATIONS_DIR)
  const path = join(directory, JOURNAL_FILE)
  ensurePrivateDirectory(directory)
  const index = new RecordIndex()
  let text = ""
  try {
    text = readFileSync(path, "utf8")
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error
  }
  const complete = text.lastIndexOf("\n") + 1
  const lines = text.slice(0, complete).split("\n")
  lines.pop()
  lines.forEach((line, i) => {
    let decoded: ReturnType<typeof decodeLine>
    try {
      decoded = decodeLine(line)
    } catch (error) {
      throw new Error(`${path}:${i + 1} is not a verification journal line: ${(error as Error).message}`)
    }
    if ("r" in decoded) index.apply(decoded.r.id, decoded.r)
    else index.apply(decoded.d, undefined)
  })

  let fd = -1
  let fileBytes = 0
  let linesWritten = 0
  const compact = () => {
    let content = ""
    for (const record of index.all()) content += lineText({ r: record })
    if (fd >= 0) closeSync(fd)
    fd = -1
    writeFileAtomic(path, content)
    fd = openSync(path, "a", PRIVATE_FILE)
    fileBytes = fstatSync(fd).size
    linesWritten = index.size
  }
  if (complete < text.length || lines.length > index.size) compact()
  else {
    fd = openSync(path, "a", PRIVATE_FILE)
    fchmodSync(fd, PRIVATE_FILE)
    fsyncPath(directory)
    fileBytes = fstatSync(fd).size
    linesWritten = lines.length
  }

  let pending: Array<Pending> = []
  let scheduled = false
  let flushing = false
  let closed = false
  /** Writes the lines pending now; the fsync runs off the event loop, and lines arriving meanwhile form the next batch. */
  const flush = () => {
    scheduled = false
    if (flushing || pending.length === 0) return
    const batch = pending
    pending = []
    const bytes = Buffer.from(batch.map((entry) => entry.text).join(""), "utf8")
    const done = (failure: unknown) => {
      flushing = false
      if (failure !== undefined) {
        // A partial batch must not be read back at the next start as changes that failed.
        try {
          ftruncateSync(fd, fileBytes)
        } catch {
          // Nothing more can be done now; the failure is reported to every change of the batch.
        }
        for (const entry of batch) entry.reject(failure)
      } else {
        fileBytes += bytes.length
        linesWritten += batch.length
        for (const entry of batch) entry.resolve()
        if (linesWritten > 2 * index.size + COMPACT_SLACK_LINES) {
          try {
            compact()
          } catch {
            // The journal stays as it is, longer than needed; the next flush tries again.
          }
        }
      }
      if (pending.length > 0) flush()
    }
    flushing = true
    try {
      for (let written = 0; written < bytes.length; ) written += writeSync(fd, bytes, written)
    } catch (error) {
      done(error)
      return
    }
    fsync(fd, (error) => done(error ?? undefined))
  }
  return {
    index,
    append: (line) =>
      new Promise<void>((resolve, reject) => {
        if (closed) {
          reject(new Error("the verification journal is closed"))
          return
        }
        pending.push({ text: lineText(line), resolve, reject })
        if (!scheduled) {
          scheduled = true
          setImmediate(flush)
        }
      }),
    close: async () => {
      closed = true
      while (flushing || pending.length > 0) {
        flush()
        await new Promise((resolve) => setImmediate(resolve))
      }
      if (fd >= 0) closeSync(fd)
      fd = -1
    }
  }
}
