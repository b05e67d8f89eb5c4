/**
 * The fixed on-disk layout of jobs, shared by everything that reads or
 * writes them: `<dataDir>/jobs/<jobId>/` holds
 * - `input.ndjson`: one line per input item, in input order: a JSON string
 *   (the email exactly as given) or `{"bad": "<raw text, at most 1000
 *   chars>", "reason": "<why it is not an email>"}`;
 * - `results.ndjson`: one `rowText(row)` line per input item, in input order;
 * - `job.json`: the job record, replaced atomically (`*.tmp` leftovers are
 *   ignored).
 */
import { randomBytes } from "node:crypto"
import { mkdirSync } from "node:fs"
import { join } from "node:path"

export const INPUT_FILE = "input.ndjson"
export const RESULTS_FILE = "results.ndjson"
export const RECORD_FILE = "job.json"

/** Raw text kept for an input item that is not an email. */
export const MAX_BAD_INPUT_CHARS = 1000

export const jobsDirectory = (dataDir: string): string => join(dataDir, "jobs")

export interface JobFiles {
  readonly directory: string
  readonly input: string
  readonly results: string
  readonly record: string
}

export const jobFiles = (dataDir: string, jobId: string): JobFiles => {
  const directory = join(jobsDirectory(dataDir), jobId)
  return {
    directory,
    input: join(directory, INPUT_FILE),
    results: join(directory, RESULTS_FILE),
    record: join(directory, RECORD_FILE)
  }
}

/**
 * A fresh path for an upload being written before its job exists, on the
 * same file system as the jobs (so it can be moved in). Hidden names under
 * `jobs/` are removed at start, so an upload a crash interrupted is cleaned.
 * Creates the jobs directory if needed.
 */
export const uploadPath = (dataDir: string): string => {
  const directory = jobsDirectory(dataDir)
  mkdirSync(directory, { recursive: true })
  return join(directory, `.upload-${randomBytes(8).toString("hex")}.tmp`)
}
