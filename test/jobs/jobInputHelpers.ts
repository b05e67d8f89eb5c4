/** Shared helpers of the job-input tests: run `readJobInput` on bytes cut into given chunks and read the output back. */
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import type { CsvDelimiter } from "../../src/jobs/csv.ts"
import type { JobBytes } from "../../src/jobs/JobStore.ts"
import { MemoryBytes } from "../../src/jobs/JobStoreMemory.ts"
import { type JobInputOptions, readJobInput } from "../../src/jobs/jobInput.ts"
import { bytesText } from "./jobTesting.ts"

export const encoder = new TextEncoder()

/** `bytes` cut after each offset in `cuts` (sorted, within bounds). */
export const cutAt = (bytes: Uint8Array, cuts: ReadonlyArray<number>): Array<Uint8Array> => {
  const chunks: Array<Uint8Array> = []
  let start = 0
  for (const cut of cuts) {
    chunks.push(bytes.slice(start, cut))
    start = cut
  }
  chunks.push(bytes.slice(start))
  return chunks
}

export const bytesOf = (body: string | Uint8Array): Uint8Array =>
  typeof body === "string" ? encoder.encode(body) : body

export const read = (
  format: JobInputOptions["format"],
  body: string | Uint8Array | ReadonlyArray<Uint8Array>,
  limits: {
    readonly maxEmails?: number
    readonly maxBytes?: number
    readonly delimiter?: CsvDelimiter
    readonly hashBody?: boolean
  } = {}
) => {
  const output = new MemoryBytes()
  const chunks = Array.isArray(body) ? body : [bytesOf(body as string | Uint8Array)]
  return readJobInput(Stream.fromIterable(chunks), {
    format,
    output,
    maxEmails: limits.maxEmails ?? 1000,
    maxBytes: limits.maxBytes ?? 1 << 20,
    delimiter: limits.delimiter,
    hashBody: limits.hashBody ?? true
  }).pipe(
    // A store that cannot be written is not what these tests are about.
    Effect.catchTag("JobStoreError", Effect.die),
    Effect.map((input) => ({ input, output, items: lines(output) }))
  )
}

/** The items of a job input: emails as strings, bad items as objects. */
export const lines = (output: JobBytes): Array<string | { bad: string; reason: string } | { email: string }> =>
  bytesText(output)
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => JSON.parse(line))
