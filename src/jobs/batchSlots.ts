/**
 * Memory a job thread and the request thread share for the batches between
 * them (`JobThreads.ts`, `jobThread.ts`): one SharedArrayBuffer per thread,
 * given once when the thread starts, cut into slots. A batch sent in a slot
 * has its input lines copied there, and the thread encodes its rows into
 * the same slot (`encodeBatch`'s `BatchMemory`); the messages carry only
 * the slot's number and lengths. The slot is the batch's until the runner
 * releases it.
 *
 * So no ArrayBuffer crosses threads per batch. Moved buffers did: each
 * answer's ~0.8 MB of rows arrived on the request thread as new external
 * memory, ~180 batches a second while a job ran, and V8 answers external
 * memory growth with incremental marking on that thread, between the
 * requests it serves (measured: `--trace-incremental-marking` of the daemon
 * during bench:jobs named "external memory pressure" as the reason for
 * most markings).
 *
 * A batch that does not fit a slot (lines or rows longer than its room),
 * or that finds every slot of its thread taken, still moves its own buffers.
 */
import { BATCH_ITEMS } from "./JobRunner.ts"
import type { BatchMemory } from "./jobBatches.ts"

/** Room for a batch's input lines: 2,048 lines of 128 bytes. */
export const SLOT_INPUT_BYTES = 256 * 1024

/** Room for a batch's rows: 2,048 rows of 1 KB (a usual row is 200-550 bytes). */
export const SLOT_TEXT_BYTES = 2 * 1024 * 1024

/** Items a slot has room for: a runner's batch at most. */
export const SLOT_ITEMS = BATCH_ITEMS

/**
 * Slots per thread: the batches of one job a thread holds while a
 * checkpoint is written (`processJob`: twice the evaluator's parallelism in
 * flight, two per thread), and as many again for a second job. Only the
 * pages a batch writes become resident.
 */
export const SLOTS_PER_THREAD = 8

/** A slot's views of the shared memory; the same on both threads. */
export interface BatchSlot extends BatchMemory {
  readonly index: number
  readonly input: Buffer
}

// Hashes first: a Float64Array view must start at a multiple of 8 bytes.
const HASHES = 0
const SPLICES = HASHES + SLOT_ITEMS * Float64Array.BYTES_PER_ELEMENT
const INPUT = SPLICES + SLOT_ITEMS * Uint32Array.BYTES_PER_ELEMENT
const TEXT = INPUT + SLOT_INPUT_BYTES
const SLOT_BYTES = TEXT + SLOT_TEXT_BYTES

/** The shared memory of one thread's slots. */
export const slotMemory = (slots: number = SLOTS_PER_THREAD): SharedArrayBuffer =>
  new SharedArrayBuffer(slots * SLOT_BYTES)

/** The slots of `memory` (made by `slotMemory`). */
export const slotsOf = (memory: SharedArrayBuffer): Array<BatchSlot> =>
  Array.from({ length: Math.floor(memory.byteLength / SLOT_BYTES) }, (_, index) => {
    const at = index * SLOT_BYTES
    return {
      index,
      hashes: new Float64Array(memory, at + HASHES, SLOT_ITEMS),
      splices: new Uint32Array(memory, at + SPLICES, SLOT_ITEMS),
      input: Buffer.from(memory, at + INPUT, SLOT_INPUT_BYTES),
      text: Buffer.from(memory, at + TEXT, SLOT_TEXT_BYTES)
    }
  })

/** Whether a batch of `count` items and `inputBytes` of lines fits a slot. */
export const fitsSlot = (count: number, inputBytes: number): boolean =>
  count <= SLOT_ITEMS && inputBytes <= SLOT_INPUT_BYTES
