/**
 * Compressed job uploads: the one place that says which compressed forms a
 * job upload may take and how they are undone. A body may be sent with a
 * `Content-Encoding` (`gzip`, `br`, and `zstd` where the running Node has
 * it; `x-gzip` is gzip, `identity` is none) and may be a gzip file sent as
 * it is (`application/gzip`, the contract's `JOB_GZIP_TYPES`); a gzip file
 * sent with a `Content-Encoding` is undone twice, the coding first.
 *
 * The body is decompressed as it arrives, by Node's own zlib, with
 * backpressure: the reader (`jobInput.ts`) pulls decompressed chunks, and
 * the decompressor produces no more than it is asked for, so a small body
 * that inflates to gigabytes holds no more memory than a plain one. The
 * limits, each a `JobInputError` that fails the upload:
 * - the bytes sent, and the bytes each stage produces, are at most
 *   `maxBytes` (`limits.jobMaxBodyBytes`): the limit is on what the reader
 *   reads, however it was sent;
 * - a stage that has produced more than `MAX_COMPRESSION_RATIO` times the
 *   bytes sent so far, past `RATIO_FLOOR_BYTES`, is a decompression bomb
 *   (413);
 * - a stream that is corrupt, cut short or followed by other bytes is a 400
 *   naming the coding (brotli and zstd would otherwise ignore what follows
 *   the end of their stream, and a job would silently lose its rows).
 */
import * as zlib from "node:zlib"
import * as NodeStream from "@effect/platform-node/NodeStream"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import {
  bodyTooLarge,
  compressionBomb,
  corruptEncoding,
  decompressedTooLarge,
  type JobInputError,
  unsupportedEncoding
} from "./jobInputError.ts"

export type UploadCoding = "gzip" | "br" | "zstd"

/**
 * How many times a body may inflate. Measured on job uploads: a CSV of
 * varied addresses and two columns compresses 4-5 times (gzip 6 to brotli
 * 11), `bench/jobIo.ts`'s regular addresses 6 (gzip) to 23 (brotli), and a
 * CSV whose every row repeats the same 100 columns beside its address
 * 31-44 times, the most a job input's rows can share. A body that inflates
 * more than twice that is made to: a gzip of one repeated byte inflates
 * 1000 times, brotli and zstd far more.
 */
export const MAX_COMPRESSION_RATIO = 100

/** Below this many decompressed bytes the ratio is not judged: a small file that compresses well costs nothing. */
export const RATIO_FLOOR_BYTES = 1 << 20

type Decompressor = zlib.Gunzip | zlib.BrotliDecompress | zlib.ZstdDecompress

const decompressors = new Map<UploadCoding, () => Decompressor>([
  ["gzip", () => zlib.createGunzip()],
  ["br", () => zlib.createBrotliDecompress()]
])
// zstd is in Node 22.15 and later.
if (typeof zlib.createZstdDecompress === "function") {
  decompressors.set("zstd", () => zlib.createZstdDecompress())
}

/** The codings a job upload may be sent in, as `Content-Encoding` names them. */
export const UPLOAD_CODINGS: ReadonlyArray<UploadCoding> = [...decompressors.keys()]

const isUploadCoding = (name: string): name is UploadCoding => decompressors.has(name as UploadCoding)

const accepted = (): string => `${UPLOAD_CODINGS.join(", ")} or identity`

/**
 * The codings to undo, in order, for a body sent with `contentEncoding`
 * (case-insensitive; absent, empty or `identity`: none) that is a gzip file
 * or not; or the 415 problem for a coding not accepted. One coding at most:
 * a list of several is refused rather than undone stage after stage.
 */
export const uploadCodings = (
  contentEncoding: string | undefined,
  gzipFile: boolean
): ReadonlyArray<UploadCoding> | JobInputError => {
  const named = (contentEncoding ?? "")
    .split(",")
    .map((name) => name.trim().toLowerCase())
    .filter((name) => name !== "" && name !== "identity")
  const file: ReadonlyArray<UploadCoding> = gzipFile ? ["gzip"] : []
  if (named.length === 0) return file
  if (named.length > 1) {
    return unsupportedEncoding(
      `Content-Encoding names several codings (${contentEncoding}); a job upload takes one of ${accepted()}.`
    )
  }
  const coding = named[0] === "x-gzip" ? "gzip" : named[0]!
  if (!isUploadCoding(coding)) {
    return unsupportedEncoding(
      `Content-Encoding ${JSON.stringify(contentEncoding)} is not accepted; a job upload takes ${accepted()}.`
    )
  }
  return [coding, ...file]
}

/** Why a decompressor failed, in words: Node's own message, or what a stream cut short means. */
const whyCorrupt = (error: unknown): string => {
  const code = (error as { code?: unknown } | undefined)?.code
  if (code === "Z_BUF_ERROR") return "it ends before the compressed stream does (cut short?)"
  const message = error instanceof Error ? error.message : String(error)
  return message.replace(/\.$/, "")
}

/** One stage: `input` undone by `coding`, its output bounded against the bytes sent so far. */
const undo = <E, R>(
  input: Stream.Stream<Uint8Array, E | JobInputError, R>,
  coding: UploadCoding,
  sent: () => number,
  maxBytes: number
): Stream.Stream<Uint8Array, E | JobInputError, R> =>
  Stream.suspend(() => {
    let decompressor: Decompressor | undefined
    let fed = 0
    let produced = 0
    const counted = Stream.mapArray(input, (chunks) => {
      for (const chunk of chunks) fed += chunk.length
      return chunks
    })
    return NodeStream.pipeThroughDuplex(counted, {
      evaluate: () => {
        decompressor = decompressors.get(coding)!()
        return decompressor
      },
      onError: (error): JobInputError => corruptEncoding(coding, whyCorrupt(error))
    }).pipe(
      Stream.mapArrayEffect((chunks) => {
        for (const chunk of chunks) produced += chunk.length
        if (produced > maxBytes) return Effect.fail(decompressedTooLarge(maxBytes))
        if (produced > RATIO_FLOOR_BYTES && produced > MAX_COMPRESSION_RATIO * sent()) {
          return Effect.fail(compressionBomb(MAX_COMPRESSION_RATIO, sent(), produced))
        }
        return Effect.succeed(chunks)
      }),
      // What the decompressor did not take follows the end of its stream.
      Stream.onEnd(
        Effect.suspend(() => {
          const left = fed - (decompressor?.bytesWritten ?? fed)
          return left > 0
            ? Effect.fail(corruptEncoding(coding, `${left} bytes follow the end of the compressed stream`))
            : Effect.void
        })
      )
    )
  })

/**
 * The body with `codings` undone as it arrives (the body itself when there
 * are none), within the limits the module header names.
 */
export const decodeUpload = <E, R>(
  body: Stream.Stream<Uint8Array, E, R>,
  codings: ReadonlyArray<UploadCoding>,
  maxBytes: number
): Stream.Stream<Uint8Array, E | JobInputError, R> => {
  if (codings.length === 0) return body
  return Stream.suspend(() => {
    let sent = 0
    let decoded: Stream.Stream<Uint8Array, E | JobInputError, R> = Stream.mapArrayEffect(body, (chunks) => {
      for (const chunk of chunks) sent += chunk.length
      return sent > maxBytes ? Effect.fail(bodyTooLarge(maxBytes)) : Effect.succeed(chunks)
    })
    for (const coding of codings) decoded = undo(decoded, coding, () => sent, maxBytes)
    return decoded
  })
}
