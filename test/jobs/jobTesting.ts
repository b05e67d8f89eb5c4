/**
 * Shared pieces of the job tests: a data directory per test, an evaluation
 * on the fixture engine (as the server builds it), input files, and a queue
 * layer over the file store.
 */
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as Layer from "effect/Layer"
import { InvalidConfiguration } from "../../src/domain/errors.ts"
import { toOfferResultRow, toResultRow } from "../../src/domain/ResultRow.ts"
import { makeEngine } from "../../src/engine/makeEngine.ts"
import type { InputItem } from "../../src/jobs/inputLines.ts"
import { badInputLine, emailLine } from "../../src/jobs/inputLines.ts"
import { JobQueue, type JobQueueOptions, type SubmitJob } from "../../src/jobs/JobQueue.ts"
import type { Evaluate } from "../../src/jobs/JobRunner.ts"
import { JobStore } from "../../src/jobs/JobStore.ts"
import { fixtureContext } from "../fixtures.ts"

export const makeDataDir = (): string => mkdtempSync(join(tmpdir(), "campusgate-jobs-"))

const engine = (() => {
  const made = makeEngine(fixtureContext(), {
    targetGroups: [{ id: "edu", name: "Any institution", criteria: { institutions: { includeSuffixRules: true } } }],
    offers: [{ id: "deal", team: "acme", name: "Deal", status: "active", targetGroups: ["edu"] }]
  })
  if (made instanceof InvalidConfiguration) throw made
  return made
})()

/** What the server passes: the engine's verdicts as result rows (throws for an unknown target). */
export const evaluate: Evaluate = (target, emails) =>
  "targetGroupId" in target
    ? engine.validateMany(emails, target.targetGroupId).map((result, i) => toResultRow(emails[i]!, result))
    : engine.validateManyOffer(emails, target.offerId).map((result, i) => toOfferResultRow(emails[i]!, result))

export const inputText = (items: ReadonlyArray<InputItem>): string =>
  items.map((item) => (typeof item === "string" ? emailLine(item) : badInputLine(item.bad, item.reason))).join("\n") +
  (items.length > 0 ? "\n" : "")

/** A job request for team acme against the target group `edu`. */
export const request = (items: ReadonlyArray<InputItem>, overrides: Partial<SubmitJob> = {}): SubmitJob => ({
  team: "acme" as never,
  target: { targetGroupId: "edu" as never },
  total: items.length,
  input: { _tag: "Write", write: (path) => writeFileSync(path, inputText(items)) },
  ...overrides
})

export const queueLayer = (dataDir: string, options: Partial<JobQueueOptions> = {}): Layer.Layer<JobQueue | JobStore> =>
  JobQueue.layer({ concurrency: 1, maxQueued: 10, retentionHours: 24, evaluate, chunkItems: 4, ...options }).pipe(
    Layer.provideMerge(JobStore.layerFiles(dataDir))
  )

export const resultLines = (path: string): Array<{ email: string; isValid: boolean; reasonCode?: string }> =>
  readFileSync(path, "utf8")
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => JSON.parse(line))

/** 200,000 items for the crash test: repeats (so duplicates matter) and some bad input. */
export const crashInput = (): Array<InputItem> =>
  Array.from({ length: 200_000 }, (_, i) =>
    i % 997 === 0 ? { bad: `item ${i}`, reason: "Not a string." } : `User${i % 150_000}@school${i % 40}.edu`
  )
