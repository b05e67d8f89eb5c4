/**
 * Where an approval is written to be reviewed in git: the reviewed dataset
 * (`config/reviewedDatasets.ts`), `datasets/reviewed.yaml` in the config
 * directory when the daemon may write there, else (files store) the data
 * directory's `reviewed.yaml`; with the Redis store the approvals live in
 * Redis and the file is written only where the config directory is
 * writable. A rejection removes the domain's entry from whichever file
 * holds it. Each file is read, changed and replaced whole, atomically
 * (`store/atomicWrite.ts`); a file that does not decode is not overwritten.
 */
import { accessSync, constants, existsSync, readFileSync } from "node:fs"
import { dirname, join } from "node:path"
import type { LoadedConfig } from "../config/loadConfig.ts"
import {
  approvalsOf,
  REVIEWED_CONFIG_FILE,
  REVIEWED_DATA_FILE,
  ReviewedFile,
  reviewedKey,
  reviewedYaml
} from "../config/reviewedDatasets.ts"
import { decodeYaml } from "../config/yamlDecode.ts"
import type { ReviewedInstitution } from "../domain/InstitutionReview.ts"
import { writeFileAtomicAsync } from "../store/atomicWrite.ts"
import type { ReviewDecision } from "./ReviewStore.ts"

/** Where approvals are written: the config directory, else the data directory (files); the config directory only (Redis). */
export type ReviewedFiles = "config-or-data" | "config-only"

/** Whether the daemon may write `path` (and create it: its nearest existing directory is writable). */
export const mayWrite = (path: string): boolean => {
  let target = path
  while (!existsSync(target)) {
    const parent = dirname(target)
    if (parent === target) return false
    target = parent
  }
  try {
    accessSync(target, constants.W_OK)
    return true
  } catch {
    return false
  }
}

/** The approvals a reviewed dataset holds (none when absent); throws when it does not decode. */
const readApprovals = (path: string): Array<ReviewedInstitution> => {
  if (!existsSync(path)) return []
  const decoded = decodeYaml(ReviewedFile, path, readFileSync(path, "utf8"), { empty: [] })
  if (!decoded.ok) {
    const first = decoded.problems[0]
    throw new Error(
      `${path} has problems, fix it first: ${first?.line === undefined ? "" : `line ${first.line}: `}${first?.message ?? ""}`
    )
  }
  return approvalsOf(decoded.value)
}

/** Replaces the file's entry for the decision's team and domain: the approval, or none. */
const rewrite = async (path: string, decision: ReviewDecision): Promise<void> => {
  const { team, domain } = decision.kind === "approve" ? decision.approval : decision.rejection
  const key = reviewedKey(team, domain)
  const current = readApprovals(path)
  const others = current.filter((approval) => reviewedKey(approval.team, approval.domain) !== key)
  if (decision.kind === "reject" && others.length === current.length) return
  const next = decision.kind === "approve" ? [...others, decision.approval] : others
  await writeFileAtomicAsync(path, reviewedYaml(next))
}

/** Writes a decision to the reviewed dataset of `config`'s directories (nothing for a config given in memory). */
export const writeDecision = async (
  files: ReviewedFiles,
  config: Pick<LoadedConfig, "configDir" | "dataDir">,
  decision: ReviewDecision
): Promise<void> => {
  if (config.configDir === undefined || config.dataDir === undefined) return
  const configFile = join(config.configDir, REVIEWED_CONFIG_FILE)
  const dataFile = join(config.dataDir, REVIEWED_DATA_FILE)
  const inConfig = mayWrite(configFile)
  if (decision.kind === "approve") {
    const path = inConfig ? configFile : files === "config-or-data" ? dataFile : undefined
    if (path !== undefined) await rewrite(path, decision)
    return
  }
  if (inConfig) await rewrite(configFile, decision)
  if (existsSync(dataFile)) await rewrite(dataFile, decision)
}
