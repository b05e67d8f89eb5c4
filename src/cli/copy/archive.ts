/**
 * The backup archive: one portable file, gzip'd NDJSON. The first line is
 * the header (format and its version, the campusgate version that wrote
 * it, the store kind it came from, when, which jobs, and the sealing of
 * its secrets, `sealing.ts`); then one entry a line (`storeEntries.ts`),
 * secrets and signing keys sealed (`{"t":"sealed","data":…}`); the last
 * line names how many of each it holds. The counts close the file rather
 * than open it, since the archive is written as the store is read: a file
 * without that line, or whose lines do not add up to it, is truncated or
 * damaged, and said so.
 *
 * Written to a temporary file beside the target (0600), fsync'd, then
 * renamed: a backup that fails leaves no half archive under its name.
 * Read as a stream, line by line: a bad line stops the read with its
 * number, a newer format is refused with what reads it.
 */

import { randomBytes } from "node:crypto"
import { once } from "node:events"
import { closeSync, createReadStream, createWriteStream, fsyncSync, openSync, renameSync, rmSync } from "node:fs"
import { basename, dirname, join } from "node:path"
import { StringDecoder } from "node:string_decoder"
import { createGunzip, createGzip } from "node:zlib"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { VERSION } from "../../version.ts"
import { newSealing, openSealing, Sealing } from "./sealing.ts"
import { Counts, countEntry, isSealed, noCounts, StoreEntry } from "./storeEntries.ts"
import type { StoreKind } from "./storeKinds.ts"

export const ARCHIVE_FORMAT = "campusgate-backup"
/** The archive format this campusgate writes and the newest it reads. */
export const FORMAT_VERSION = 1

export const ArchiveHeader = Schema.Struct({
  format: Schema.Literal(ARCHIVE_FORMAT),
  formatVersion: Schema.Number,
  /** Random: names the archive's restores, so restoring it again adds its statistics once. */
  id: Schema.String,
  campusgate: Schema.String,
  kind: Schema.Literals(["files", "redis", "postgres"]),
  createdAt: Schema.String,
  jobs: Schema.Literals(["none", "finished", "all"]),
  sealing: Sealing
})
export type ArchiveHeader = typeof ArchiveHeader.Type

const SealedLine = Schema.Struct({ t: Schema.Literal("sealed"), data: Schema.String })
const EndLine = Schema.Struct({ t: Schema.Literal("end"), counts: Counts })

const encodeEntry = Schema.encodeSync(StoreEntry)
const decodeEntry = Schema.decodeUnknownSync(StoreEntry)
const decodeHeader = Schema.decodeUnknownSync(ArchiveHeader)
const decodeSealed = Schema.decodeUnknownSync(SealedLine)
const decodeEnd = Schema.decodeUnknownSync(EndLine)

/** Why an archive cannot be read: the file, the line (when one is at fault) and what is wrong. */
export class ArchiveError extends Error {
  readonly file: string
  readonly line: number | undefined
  constructor(file: string, line: number | undefined, problem: string) {
    super(`${file}${line === undefined ? "" : `, line ${line}`}: ${problem}`)
    this.file = file
    this.line = line
  }
}

/** Bytes of lines gathered before one write to the compressor. */
const WRITE_BUFFER = 1 << 16

export interface ArchiveWriter {
  readonly put: (entry: StoreEntry) => Effect.Effect<void, unknown>
  /** Writes the last line, makes the archive durable and puts it in place; answers its size in bytes. */
  readonly end: Effect.Effect<{ readonly counts: Counts; readonly bytes: number }, unknown>
}

/** An archive being written to `file` (in place once `end` succeeds; removed if the scope closes before). */
export const archiveWriter = (
  file: string,
  header: { readonly kind: StoreKind; readonly jobs: ArchiveHeader["jobs"]; readonly passphrase: string }
) =>
  Effect.gen(function* () {
    const temporary = join(dirname(file), `.${basename(file)}.${randomBytes(6).toString("hex")}.tmp`)
    let done = false
    const gzip = createGzip()
    const out = createWriteStream(temporary, { mode: 0o600 })
    gzip.pipe(out)
    yield* Effect.addFinalizer(() =>
      Effect.sync(() => {
        if (done) return
        gzip.destroy()
        out.destroy()
        rmSync(temporary, { force: true })
      })
    )
    const { sealing, seal } = newSealing(header.passphrase)
    const counts = noCounts()
    let buffered = ""
    const flush = Effect.promise(async () => {
      const text = buffered
      buffered = ""
      if (!gzip.write(text)) await once(gzip, "drain")
    })
    const line = (value: unknown) =>
      Effect.suspend(() => {
        buffered += `${JSON.stringify(value)}\n`
        return buffered.length >= WRITE_BUFFER ? flush : Effect.void
      })
    const opening: ArchiveHeader = {
      format: ARCHIVE_FORMAT,
      formatVersion: FORMAT_VERSION,
      id: randomBytes(12).toString("hex"),
      campusgate: VERSION,
      kind: header.kind,
      createdAt: new Date().toISOString(),
      jobs: header.jobs,
      sealing
    }
    yield* line(opening)
    const writer: ArchiveWriter = {
      put: (entry) =>
        Effect.suspend(() => {
          countEntry(counts, entry)
          const encoded = encodeEntry(entry)
          return line(isSealed(entry) ? { t: "sealed", data: seal(JSON.stringify(encoded)) } : encoded)
        }),
      end: Effect.gen(function* () {
        yield* line({ t: "end", counts })
        yield* flush
        gzip.end()
        yield* Effect.promise(() => once(out, "close"))
        yield* Effect.try(() => {
          const fd = openSync(temporary, "r")
          try {
            fsyncSync(fd)
          } finally {
            closeSync(fd)
          }
          renameSync(temporary, file)
          done = true
        })
        return { counts: { ...counts }, bytes: out.bytesWritten }
      })
    }
    return writer
  })

/** What reading an archive found: its header and its counts. */
export interface ArchiveRead {
  readonly header: ArchiveHeader
  readonly counts: Counts
  /** Opens the archive's sealed lines: a second read of it need not draw the key again. */
  readonly open: (sealed: string) => string
}

const problemOf = (error: unknown): string => {
  const text = error instanceof Error ? error.message : String(error)
  return text.length > 400 ? `${text.slice(0, 400)}…` : text
}

/**
 * Reads `file`, handing each entry (secrets unsealed with `passphrase`) to
 * `use` with its line number; fails with an `ArchiveError` naming the line
 * at fault, or with `WrongPassphrase` before any entry is handed on.
 */
export const readArchive = <E>(
  file: string,
  passphrase: string | ArchiveRead["open"],
  use: (entry: StoreEntry, line: number) => Effect.Effect<void, E>
): Effect.Effect<ArchiveRead, ArchiveError | E | Error> =>
  Effect.gen(function* () {
    const input = createReadStream(file)
    const gunzip = createGunzip()
    input.on("error", (error) => gunzip.destroy(error))
    input.pipe(gunzip)
    const chunks = gunzip[Symbol.asyncIterator]()
    const decoder = new StringDecoder("utf8")
    let lineNumber = 0
    let pending: Array<string> = []
    let rest = ""
    let finished = false
    /** The next line, undefined at the end of the file. */
    const nextLine = Effect.gen(function* () {
      while (pending.length === 0 && !finished) {
        const next = yield* Effect.tryPromise({
          try: () => chunks.next(),
          catch: (error) => {
            const code = (error as NodeJS.ErrnoException).code
            if (code === "ENOENT") return new ArchiveError(file, undefined, "no such file")
            if (code === "Z_DATA_ERROR" && lineNumber === 0)
              return new ArchiveError(file, undefined, "not a campusgate backup (not gzip)")
            return new ArchiveError(
              file,
              lineNumber + 1,
              code === "Z_BUF_ERROR" || /unexpected end/.test(problemOf(error))
                ? "the archive is truncated"
                : `the archive is damaged (${problemOf(error)})`
            )
          }
        })
        if (next.done) {
          finished = true
          const last = rest + decoder.end()
          rest = ""
          if (last !== "") pending.push(last)
        } else {
          const lines = (rest + decoder.write(next.value as Buffer)).split("\n")
          rest = lines.pop()!
          pending = lines
        }
      }
      const line = pending.shift()
      if (line !== undefined) lineNumber++
      return line
    })
    const parse = (text: string) =>
      Effect.try({
        try: () => JSON.parse(text) as unknown,
        catch: () => new ArchiveError(file, lineNumber, "not a JSON line: the archive is damaged")
      })
    return yield* Effect.gen(function* () {
      const first = yield* nextLine
      if (first === undefined) return yield* Effect.fail(new ArchiveError(file, undefined, "the archive is empty"))
      const raw = yield* parse(first)
      const format = (raw as { format?: unknown; formatVersion?: unknown } | null) ?? {}
      if (format.format !== ARCHIVE_FORMAT)
        return yield* Effect.fail(new ArchiveError(file, 1, "not a campusgate backup (no backup header)"))
      if (typeof format.formatVersion === "number" && format.formatVersion > FORMAT_VERSION) {
        const writer = (raw as { campusgate?: unknown }).campusgate
        return yield* Effect.fail(
          new ArchiveError(
            file,
            1,
            `written in backup format ${format.formatVersion} by campusgate ${String(writer)}; this campusgate (${VERSION}) reads format ${FORMAT_VERSION} and older: restore with campusgate ${String(writer)} or newer`
          )
        )
      }
      const header = yield* Effect.try({
        try: () => decodeHeader(raw),
        catch: (error) => new ArchiveError(file, 1, `the header does not decode: ${problemOf(error)}`)
      })
      const open =
        typeof passphrase === "string"
          ? yield* Effect.try({ try: () => openSealing(header.sealing, passphrase), catch: (error) => error as Error })
          : passphrase
      const counts = noCounts()
      while (true) {
        const text = yield* nextLine
        if (text === undefined)
          return yield* Effect.fail(
            new ArchiveError(
              file,
              undefined,
              `the archive ends after line ${lineNumber} without its last line: it is truncated`
            )
          )
        if (text === "") continue
        const at = lineNumber
        const value = yield* parse(text)
        const tag = (value as { t?: unknown } | null)?.t
        if (tag === "end") {
          const end = yield* Effect.try({
            try: () => decodeEnd(value),
            catch: (error) => new ArchiveError(file, at, `the last line does not decode: ${problemOf(error)}`)
          })
          const differing = (Object.keys(counts) as Array<keyof Counts>).filter(
            (key) => counts[key] !== end.counts[key]
          )
          if (differing.length > 0)
            return yield* Effect.fail(
              new ArchiveError(
                file,
                at,
                `the archive holds other counts than its last line names (${differing.map((key) => `${key}: ${counts[key]} of ${end.counts[key]}`).join(", ")}): it is damaged`
              )
            )
          if ((yield* nextLine) !== undefined)
            return yield* Effect.fail(
              new ArchiveError(file, lineNumber, "lines follow the last line: the archive is damaged")
            )
          return { header, counts: end.counts, open }
        }
        const entry = yield* Effect.try({
          try: () => decodeEntry(tag === "sealed" ? JSON.parse(open(decodeSealed(value).data)) : value),
          catch: (error) => new ArchiveError(file, at, `the entry does not decode: ${problemOf(error)}`)
        })
        countEntry(counts, entry)
        yield* use(entry, at)
      }
    }).pipe(
      Effect.ensuring(
        Effect.sync(() => {
          input.destroy()
          gunzip.destroy()
        })
      )
    )
  })
