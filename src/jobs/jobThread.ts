/**
 * A job thread of `JobThreads.ts`: it holds an engine built from the
 * configuration it was last sent, evaluates each batch it is sent with the
 * daemon's own `Validation.rows` (`encodeBatch`), and answers the encoded
 * rows (in the batch's slot of the memory it shares with the daemon's
 * thread, `batchSlots.ts`, or moved), the verdicts by kind for the metrics
 * and, for an offer, the usage the batch counted. It runs at a lower CPU
 * priority than the thread that answers requests (`lowerPriority`).
 */
import { getPriority, setPriority } from "node:os"
import { parentPort, workerData } from "node:worker_threads"
import { EngineBuilder, type EngineConfig } from "../app/EngineBuilder.ts"
import { isValidated, makeValidation, type Validated } from "../app/ValidationService.ts"
import { InvalidConfiguration } from "../domain/errors.ts"
import { ALL_TEAMS } from "../domain/visibility.ts"
import type { Engine } from "../engine/Engine.ts"
import { InstitutionTable } from "../engine/institutions/InstitutionTable.ts"
import { EmailLists } from "../engine/policy/EmailLists.ts"
import type { Sighting } from "../reviews/ReviewQueue.ts"
import { usageTally } from "../stats/UsageRecorder.ts"
import { slotsOf } from "./batchSlots.ts"
import { duplicatesKey } from "./duplicates.ts"
import type { AnsweredBatch, ThreadAnswer, ThreadData, ThreadMessage, Verdicts } from "./JobThreads.ts"
import { type Evaluate, encodeBatch } from "./jobBatches.ts"
import { HEAP_BOUND } from "./jobThreadMemory.ts"
import { HeapBound } from "./releaseMemory.ts"

/**
 * Nice 10 above the daemon's (at most 19): where a job thread and the
 * request thread share a core, the kernel gives the request thread about
 * ten times the job's share, so a running job costs single validations
 * little latency (issue 16: p99 while a 1M-email job runs at most twice the
 * idle p99, `npm run bench:jobs`). On Linux the nice value is per thread,
 * and 0 means the calling thread; elsewhere the call may be refused.
 */
const lowerPriority = (): void => {
  try {
    setPriority(Math.min(19, getPriority() + 10))
  } catch {
    // Not permitted here: the thread runs at the daemon's priority.
  }
}

const port = parentPort!
const { usageKey, slots: memory } = workerData as ThreadData
const slots = slotsOf(memory)
lowerPriority()

let engine: Engine | InvalidConfiguration | undefined
let builder: EngineBuilder | undefined
let config: EngineConfig | undefined
/** The daemon's institution table of `config`, in shared memory (`JobThreads.ts`), if it was sent. */
let institutions:
  | { readonly bytes: Uint8Array; readonly datasetNames: Readonly<Record<string, string>> | undefined }
  | undefined
/** The instant of the batch being evaluated: offer windows are judged at the daemon's clock, sent with it. */
let at = 0
let verdicts: Verdicts = []
/** The unknown domains the batch met, by team (`ValidationService.ts` `sightRows`), sent back with its rows. */
let sightings: Array<readonly [string, ReadonlyArray<Sighting>]> = []
const heapBound = new HeapBound(HEAP_BOUND)

const count = (result: Validated, times: number) => {
  const { isValid, reasonCode } = result
  for (const counted of verdicts) {
    if (counted.isValid === isValid && counted.reasonCode === reasonCode) {
      counted.times += times
      return
    }
  }
  verdicts.push({ isValid, reasonCode, times })
}

const validation = makeValidation(
  {
    current: () => {
      if (engine === undefined) throw new Error("The job thread has no configuration.")
      if (engine instanceof InvalidConfiguration) throw new Error(engine.message)
      return { engine }
    }
  },
  // Offer usage goes to the batch's tally; the daemon's own recorder is not here.
  { record: () => undefined, recordMany: () => undefined },
  {
    validated: (result) => count(result, 1),
    validatedAll: (results) => {
      for (const result of results) if (isValidated(result)) count(result, 1)
    }
  },
  { sighted: () => undefined, seen: (team, seen) => sightings.push([team, seen]) }
)

const evaluate: Evaluate = (target, emails, tally, read, team) =>
  validation.rowVerdicts(team ?? ALL_TEAMS, target, emails, tally, read)

/** The key of this thread's duplicate hashes: the same as every thread's, and the request thread's. */
const hashKey = duplicatesKey(usageKey)

const build = () => {
  try {
    const shared = institutions
    engine = builder!.engineFor(
      config!,
      shared === undefined ? undefined : () => InstitutionTable.fromBuffer(shared.bytes, shared.datasetNames)
    )
  } catch (error) {
    engine = new InvalidConfiguration({
      problems: [{ path: "", message: error instanceof Error ? error.message : String(error) }]
    })
  }
}

const answer = (message: ThreadAnswer, transfer: Array<ArrayBuffer> = []) => port.postMessage(message, transfer)

port.on("message", (message: ThreadMessage) => {
  if (message.kind === "config") {
    // Its rows' verdicts are kept by host (`rowVerdicts.ts`), not its groups' verdicts on institutions (`jobThreadMemory.ts`).
    builder ??= new EngineBuilder({
      now: () => at,
      builtInInstitutions: message.builtInInstitutions,
      rememberVerdicts: false,
      emailLists: message.emailLists === undefined ? undefined : EmailLists.fromBuffer(message.emailLists)
    })
    config = message.config
    institutions =
      message.institutions === undefined
        ? undefined
        : { bytes: message.institutions, datasetNames: message.institutionDatasetNames }
    build()
    heapBound.settle()
    return
  }
  const { id } = message
  const slot = message.slot === undefined ? undefined : slots[message.slot]!
  const lines = typeof message.lines === "number" ? slot!.input.subarray(0, message.lines) : message.lines
  const request = { ...message.request, lines }
  at = message.at
  verdicts = []
  sightings = []
  const tally =
    message.countUsage && usageKey !== undefined && "offerId" in request.target
      ? usageTally(usageKey, request.target.offerId)
      : undefined
  try {
    const batch = encodeBatch(request, evaluate, tally, slot, hashKey)
    const usage = tally?.takeCounts()
    const inSlot = slot !== undefined && batch.text.buffer === slot.text.buffer
    const sent: AnsweredBatch = {
      valid: batch.valid,
      badInput: batch.badInput,
      text: inSlot ? batch.text.length : batch.text,
      splices: slot === undefined ? batch.splices : undefined,
      hashes: slot === undefined ? batch.hashes : undefined,
      ...(usage === undefined ? {} : { usage: [usage] })
    }
    const moved: Array<ArrayBuffer> = []
    if (!inSlot) moved.push(batch.text.buffer as ArrayBuffer)
    if (slot === undefined) moved.push(batch.splices.buffer as ArrayBuffer, batch.hashes.buffer as ArrayBuffer)
    answer({ id, ok: true, batch: sent, verdicts, sightings }, moved)
    // After the answer, so the batch's runner does not wait for the collection.
    heapBound.check()
  } catch (error) {
    answer({ id, ok: false, error: error instanceof Error ? error.message : String(error) })
  }
})
