/**
 * Compressed job uploads undone as they arrive (`uploadCoding.ts`): which
 * codings are taken, the same bytes out whatever the cuts, corrupt, cut
 * short and trailing streams refused, and the limits on the bytes sent, the
 * bytes produced and the ratio between them.
 */
import { createHash } from "node:crypto"
import { brotliCompressSync, gzipSync, zstdCompressSync } from "node:zlib"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import { MemoryBytes } from "../../src/jobs/JobStoreMemory.ts"
import { readJobInput } from "../../src/jobs/jobInput.ts"
import { JobInputError } from "../../src/jobs/jobInputError.ts"
import {
  decodeUpload,
  MAX_COMPRESSION_RATIO,
  RATIO_FLOOR_BYTES,
  UPLOAD_CODINGS,
  type UploadCoding,
  uploadCodings
} from "../../src/jobs/uploadCoding.ts"
import { cutAt, lines } from "./jobInputHelpers.ts"

const compress: Record<UploadCoding, (bytes: Uint8Array) => Uint8Array> = {
  gzip: (bytes) => gzipSync(bytes),
  br: (bytes) => brotliCompressSync(bytes),
  zstd: (bytes) => zstdCompressSync(bytes)
}

/** `bytes` in chunks of `size`. */
const chunksOf = (bytes: Uint8Array, size: number): Array<Uint8Array> =>
  cutAt(
    bytes,
    Array.from({ length: Math.ceil(bytes.length / size) - 1 }, (_, i) => (i + 1) * size)
  )

const decoded = (chunks: ReadonlyArray<Uint8Array>, codings: ReadonlyArray<UploadCoding>, maxBytes = 1 << 30) =>
  Effect.map(Stream.runCollect(decodeUpload(Stream.fromIterable(chunks), codings, maxBytes)), (parts) =>
    Buffer.concat(parts)
  )

/** The input error a decoding fails with. */
const failure = <A, E>(effect: Effect.Effect<A, E>) =>
  Effect.flatMap(Effect.flip(effect), (error) =>
    error instanceof JobInputError ? Effect.succeed(error) : Effect.die(error)
  )

/** A CSV of `rows` varied addresses with a column, as a job upload sends it. */
const csvText = (rows: number): string =>
  `\uFEFFcustomerId;Email\r\n${Array.from(
    { length: rows },
    (_, i) => `c-${i};${createHash("sha256").update(String(i)).digest("hex").slice(0, 8)}@dept${i % 7}.ox.ac.uk`
  ).join("\r\n")}\r\n`

describe("uploadCodings", () => {
  it("takes gzip, br and zstd in any case, x-gzip as gzip, identity as none; a gzip file adds gzip after", () => {
    expect(UPLOAD_CODINGS).toEqual(["gzip", "br", "zstd"])
    expect(uploadCodings(undefined, false)).toEqual([])
    expect(uploadCodings("", false)).toEqual([])
    expect(uploadCodings("Identity", false)).toEqual([])
    expect(uploadCodings("GZIP", false)).toEqual(["gzip"])
    expect(uploadCodings(" x-gzip ", false)).toEqual(["gzip"])
    expect(uploadCodings("br", false)).toEqual(["br"])
    expect(uploadCodings("zstd", false)).toEqual(["zstd"])
    expect(uploadCodings("identity, Br", false)).toEqual(["br"])
    expect(uploadCodings(undefined, true)).toEqual(["gzip"])
    expect(uploadCodings("br", true)).toEqual(["br", "gzip"])
  })

  it("refuses another coding, or several, naming those it takes (415)", () => {
    const deflate = uploadCodings("deflate", false)
    expect(deflate).toMatchObject({ reason: "UnsupportedEncoding", code: "UNSUPPORTED_MEDIA_TYPE" })
    expect((deflate as JobInputError).detail).toBe(
      'Content-Encoding "deflate" is not accepted; a job upload takes gzip, br, zstd or identity.'
    )
    const several = uploadCodings("gzip, br", false)
    expect(several).toMatchObject({ reason: "UnsupportedEncoding", code: "UNSUPPORTED_MEDIA_TYPE" })
    expect((several as JobInputError).detail).toBe(
      "Content-Encoding names several codings (gzip, br); a job upload takes one of gzip, br, zstd or identity."
    )
  })
})

describe("decodeUpload", () => {
  it.effect("gives back the bytes sent, whatever the cuts, for every coding and a gzip file under one", () =>
    Effect.gen(function* () {
      const plain = Buffer.from(csvText(600))
      for (const coding of UPLOAD_CODINGS) {
        const body = compress[coding](plain)
        for (const size of [1, 7, 4096, body.length]) {
          expect((yield* decoded(chunksOf(body, size), [coding])).equals(plain), `${coding} in ${size}`).toBe(true)
        }
      }
      const file = compress.br(gzipSync(plain))
      expect((yield* decoded(chunksOf(file, 1000), ["br", "gzip"])).equals(plain)).toBe(true)
      // A gzip of several members (`cat a.gz b.gz`) is their contents one after the other.
      const twice = Buffer.concat([gzipSync(plain), gzipSync(plain)])
      expect((yield* decoded([twice], ["gzip"])).equals(Buffer.concat([plain, plain]))).toBe(true)
      expect(yield* Stream.runCollect(decodeUpload(Stream.make(plain), [], 10))).toEqual([plain])
    })
  )

  it.effect("refuses a corrupt stream, one cut short and one with bytes after its end, naming the coding", () =>
    Effect.gen(function* () {
      const plain = Buffer.from(csvText(2000))
      for (const coding of UPLOAD_CODINGS) {
        const body = compress[coding](plain)
        const garbage = yield* failure(decoded([Buffer.from("customerId,email\r\nc-1,a@ox.ac.uk\r\n")], [coding]))
        expect(garbage).toMatchObject({
          reason: "CorruptEncoding",
          code: "VALIDATION_ERROR",
          errors: [{ field: "/body", code: "CORRUPT_ENCODING" }]
        })
        expect(garbage.detail).toMatch(new RegExp(`^The body is not a valid ${coding} stream: `))
        const cutShort = yield* failure(decoded(chunksOf(body.subarray(0, body.length - 5), 1000), [coding]))
        expect(cutShort.detail).toBe(
          `The body is not a valid ${coding} stream: it ends before the compressed stream does (cut short?).`
        )
        const trailing = yield* failure(decoded([body, Buffer.from("xyz")], [coding]))
        expect(trailing.reason, coding).toBe("CorruptEncoding")
        const empty = yield* failure(decoded([], [coding]))
        expect(empty.reason).toBe("CorruptEncoding")
      }
      // brotli and zstd stop at their stream's end: what follows would be lost without a word.
      expect((yield* failure(decoded([compress.br(plain), Buffer.from("xyz")], ["br"]))).detail).toBe(
        "The body is not a valid br stream: 3 bytes follow the end of the compressed stream."
      )
      const twiceBr = Buffer.concat([compress.br(plain), compress.br(plain)])
      expect((yield* failure(decoded([twiceBr], ["br"]))).reason).toBe("CorruptEncoding")
    })
  )

  it.effect("bounds the bytes sent and the bytes decompressed by the same limit", () =>
    Effect.gen(function* () {
      const plain = Buffer.from(csvText(20_000))
      const body = gzipSync(plain)
      expect(body.length).toBeLessThan(plain.length / 3)
      const inflated = yield* failure(decoded(chunksOf(body, 16_384), ["gzip"], plain.length - 1))
      expect(inflated).toMatchObject({ reason: "BodyTooLarge", code: "PAYLOAD_TOO_LARGE" })
      expect(inflated.detail).toBe(
        `The body decompresses to more than ${plain.length - 1} bytes, the largest job upload, compressed or not.`
      )
      const sent = yield* failure(decoded(chunksOf(body, 16_384), ["gzip"], body.length - 1))
      expect(sent).toMatchObject({
        reason: "BodyTooLarge",
        detail: `The body is larger than ${body.length - 1} bytes.`
      })
      expect((yield* decoded(chunksOf(body, 16_384), ["gzip"], plain.length)).length).toBe(plain.length)
    })
  )

  it.effect("refuses a bomb once it has inflated past the ratio, pulling little of it", () =>
    Effect.gen(function* () {
      // 64 gzip members of 16 MiB of newlines each: 1 GiB from about 1 MB sent.
      const member = gzipSync(Buffer.alloc(16 << 20, 10), { level: 9 })
      let pulled = 0
      const body = Stream.fromIterable(Array.from({ length: 64 }, () => member)).pipe(
        Stream.tap(() => Effect.sync(() => pulled++))
      )
      const bomb = yield* failure(Stream.runDrain(decodeUpload(body, ["gzip"], 1 << 30)))
      expect(bomb).toMatchObject({ reason: "CompressionBomb", code: "PAYLOAD_TOO_LARGE" })
      expect(bomb.detail).toMatch(
        new RegExp(
          `^The body inflates more than ${MAX_COMPRESSION_RATIO} times \\(\\d+ bytes sent had already become \\d+\\)`
        )
      )
      // What was pulled: the stages read a few chunks ahead of the decompressor, no more.
      expect(pulled).toBeLessThan(8)
    })
  )

  it.effect("takes a small body that inflates past the ratio: below the floor it costs nothing", () =>
    Effect.gen(function* () {
      const plain = Buffer.from('"a@ox.ac.uk"\n'.repeat(Math.floor(RATIO_FLOOR_BYTES / 13)))
      const body = gzipSync(plain, { level: 9 })
      expect(plain.length / body.length).toBeGreaterThan(MAX_COMPRESSION_RATIO)
      expect((yield* decoded([body], ["gzip"])).length).toBe(plain.length)
    })
  )

  it.effect("feeds the upload reader: the same items and hash as the body sent plain", () =>
    Effect.gen(function* () {
      const plain = Buffer.from(csvText(500))
      const read = (body: Stream.Stream<Uint8Array, JobInputError>) => {
        const output = new MemoryBytes()
        return Effect.map(
          readJobInput(body, { format: "csv", output, maxEmails: 1000, maxBytes: 1 << 20, hashBody: true }),
          (input) => ({ input, items: lines(output) })
        ).pipe(Effect.catchTag("JobStoreError", Effect.die))
      }
      const expected = yield* read(Stream.make(plain))
      expect(expected.input.total).toBe(500)
      for (const coding of UPLOAD_CODINGS) {
        const sent = Stream.fromIterable(chunksOf(compress[coding](plain), 100))
        const got = yield* read(decodeUpload(sent, [coding], 1 << 20))
        expect(got.items).toEqual(expected.items)
        expect(got.input.columns).toEqual(["customerId"])
        expect(got.input.bodyHash).toBe(expected.input.bodyHash)
      }
    })
  )
})
