/**
 * A batch split across job threads by host, and its parts' rows put back
 * in input order (`JobThreads.ts`). Each thread remembers what it learned
 * about the hosts it met: their facts and each job target's row verdict
 * (`rowVerdicts.ts`). Dealt out whole, every batch reaches one thread, so
 * every thread met nearly every host of a job and learned it on its own:
 * n threads did a job's cold work n times and kept n copies of what it
 * learned. Split by a hash of the host, the emails of one host always go
 * to the same thread, so each host is learned once and kept once, whatever
 * the number of threads.
 *
 * Where an email goes decides nothing but which thread's memory serves it:
 * every thread judges any email alike. A line with no email in it (bad
 * input) goes by a hash of the whole line.
 */
import type { TalliedCounts } from "../domain/OfferUsage.ts"
import { SLOT_INPUT_BYTES, SLOT_ITEMS, SLOT_TEXT_BYTES } from "./batchSlots.ts"
import type { BatchMemory, EncodedBatch } from "./jobBatches.ts"

const NEWLINE = 0x0a
const QUOTE = 0x22
const AT = 0x40
/** `{"email":"`, how an email with columns starts its line (`inputItems.ts`). */
const EMAIL_FIELD = Buffer.from(`{"email":"`)

/** FNV-1a over `bytes[from..to)` read backwards, ASCII upper case read as lower case. */
const hashBack = (bytes: Uint8Array, from: number, to: number): number => {
  let hash = 0x811c9dc5
  for (let i = to - 1; i >= from; i--) {
    const c = bytes[i]!
    hash = Math.imul(hash ^ (c >= 0x41 && c <= 0x5a ? c | 0x20 : c), 0x01000193)
  }
  return hash >>> 0
}

/** FNV-1a of what follows the last `@` in `bytes[from..to)`, read backwards as `hashBack`; -1 without an `@`. */
const hashHost = (bytes: Uint8Array, from: number, to: number): number => {
  let hash = 0x811c9dc5
  for (let i = to - 1; i >= from; i--) {
    const c = bytes[i]!
    if (c === AT) return hash >>> 0
    hash = Math.imul(hash ^ (c >= 0x41 && c <= 0x5a ? c | 0x20 : c), 0x01000193)
  }
  return -1
}

/**
 * The shard (0 to `shards` - 1) of the input line `bytes[start..end)` (no
 * line break): by its email's host when the line is an email, alone or
 * with columns; else by the whole line. The host of a plain email line
 * (`"local@host"`, the common line) is what follows its last `@`, read back
 * from the closing quote. An escape in the email may mislead the reading:
 * such a line still goes to one shard every time, which is all that counts.
 */
export const shardOfLine = (bytes: Uint8Array, start: number, end: number, shards: number): number => {
  let from = -1
  let to = -1
  if (bytes[start] === QUOTE && bytes[end - 1] === QUOTE) {
    from = start + 1
    to = end - 1
  } else if (end - start > EMAIL_FIELD.length && EMAIL_FIELD.compare(bytes, start, start + EMAIL_FIELD.length) === 0) {
    from = start + EMAIL_FIELD.length
    to = bytes.indexOf(QUOTE, from)
  }
  const host = to > from ? hashHost(bytes, from, to) : -1
  return (host < 0 ? hashBack(bytes, start, end) : host) % shards
}

/** A batch's lines of one shard, copied out, and how many. */
export interface ShardLines {
  /** The lines, each ending in a line break: a view of a buffer `splitLines` reuses on its next call. */
  readonly lines: Uint8Array
  readonly count: number
}

/**
 * Splits `count` lines (each ending in a line break) into `shards` parts,
 * recording each line's shard in `owners`. Each part's lines are copied
 * into `into[shard]` (grown when short, so a later call reuses it).
 */
export const splitLines = (
  lines: Uint8Array,
  count: number,
  owners: Uint16Array,
  into: Array<Buffer>
): Array<ShardLines> => {
  const source = asBuffer(lines)
  const shards = into.length
  const used = new Array<number>(shards).fill(0)
  const counts = new Array<number>(shards).fill(0)
  // Consecutive lines of one shard are copied at once.
  let runShard = -1
  let runStart = 0
  const flush = (runEnd: number) => {
    if (runShard < 0) return
    let buffer = into[runShard]!
    const at = used[runShard]!
    const length = runEnd - runStart
    if (at + length > buffer.length) {
      const grown = Buffer.allocUnsafe(Math.max(buffer.length * 2, at + length))
      buffer.copy(grown, 0, 0, at)
      into[runShard] = buffer = grown
    }
    source.copy(buffer, at, runStart, runEnd)
    used[runShard] = at + length
  }
  let start = 0
  for (let i = 0; i < count; i++) {
    const end = source.indexOf(NEWLINE, start)
    if (end < 0) throw new Error(`The batch has ${i} lines, not ${count}.`)
    const shard = shardOfLine(source, start, end, shards)
    owners[i] = shard
    counts[shard]!++
    if (shard !== runShard) {
      flush(start)
      runShard = shard
      runStart = start
    }
    start = end + 1
  }
  flush(start)
  return into.map((buffer, shard) => ({ lines: buffer.subarray(0, used[shard]), count: counts[shard]! }))
}

/** A Buffer over the same bytes (no copy), for its native `indexOf` and `copy`. */
const asBuffer = (bytes: Uint8Array): Buffer =>
  Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length)

/**
 * The rows of a batch split by `splitLines`, in input order: row i is the
 * next row of part `owners[i]`. A row ends at the first line break after
 * its splice (what follows the splice is `}` or the columns, JSON with no
 * raw line break). Written into `memory` (its text grown as needed, so the
 * answer's text may be a buffer of its own).
 */
export const mergeRows = (
  owners: Uint16Array,
  count: number,
  parts: ReadonlyArray<EncodedBatch | undefined>,
  memory: BatchMemory
): Pick<EncodedBatch, "text" | "splices" | "hashes"> => {
  const texts = parts.map((part) => (part === undefined ? undefined : asBuffer(part.text)))
  let bytes = 0
  for (const part of texts) if (part !== undefined) bytes += part.length
  const text = memory.text.length >= bytes ? memory.text : Buffer.allocUnsafe(bytes)
  const splices = memory.splices.subarray(0, count)
  const hashes = memory.hashes.subarray(0, count)
  const rows = new Array<number>(parts.length).fill(0)
  const starts = new Array<number>(parts.length).fill(0)
  let written = 0
  for (let i = 0; i < count; ) {
    // A run of rows of one part is copied at once.
    const shard = owners[i]!
    const part = parts[shard]!
    const source = texts[shard]!
    const start = starts[shard]!
    let end = start
    for (; i < count && owners[i] === shard; i++) {
      const row = rows[shard]!++
      const splice = part.splices[row]!
      splices[i] = written + splice - start
      hashes[i] = part.hashes[row]!
      // A row without columns ends `}\n` right after its splice.
      end = source[splice + 1] === NEWLINE ? splice + 2 : source.indexOf(NEWLINE, splice) + 1
    }
    source.copy(text, written, start, end)
    written += end - start
    starts[shard] = end
  }
  return { text: text.subarray(0, written), splices, hashes }
}

/**
 * What a pool of threads keeps to split its batches and merge their parts:
 * a buffer per shard that each split reuses, and memory for merged rows
 * (a slot's room), taken per batch and given back on `release`.
 */
export class HostShards {
  readonly #lines: Array<Buffer>
  readonly #free: Array<BatchMemory> = []
  readonly #held = new WeakMap<EncodedBatch, BatchMemory>()

  constructor(shards: number) {
    this.#lines = Array.from({ length: shards }, () => Buffer.allocUnsafe(SLOT_INPUT_BYTES))
  }

  /** `splitLines` into this pool's buffers: each part is good until the next split. */
  split(lines: Uint8Array, count: number, owners: Uint16Array): Array<ShardLines> {
    return splitLines(lines, count, owners, this.#lines)
  }

  /** The parts' rows in input order (`mergeRows`), with their counts and usage, held until `release`. */
  merge(owners: Uint16Array, count: number, parts: ReadonlyArray<EncodedBatch | undefined>): EncodedBatch {
    const memory = this.#free.pop() ?? {
      text: Buffer.allocUnsafe(SLOT_TEXT_BYTES),
      splices: new Uint32Array(SLOT_ITEMS),
      hashes: new Float64Array(SLOT_ITEMS)
    }
    let valid = 0
    let badInput = 0
    const usage: Array<TalliedCounts> = []
    for (const part of parts) {
      if (part === undefined) continue
      valid += part.valid
      badInput += part.badInput
      if (part.usage !== undefined) usage.push(...part.usage)
    }
    const batch: EncodedBatch = {
      ...mergeRows(owners, count, parts, memory),
      valid,
      badInput,
      ...(usage.length === 0 ? {} : { usage })
    }
    this.#held.set(batch, memory)
    return batch
  }

  /** Gives a merged batch's memory back; false for a batch this did not merge. */
  release(batch: EncodedBatch): boolean {
    const memory = this.#held.get(batch)
    if (memory === undefined) return false
    this.#held.delete(batch)
    this.#free.push(memory)
    return true
  }
}
