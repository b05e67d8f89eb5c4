/**
 * The read-only data every evaluation consults: the institution index, the
 * email policy lists, and the host directory that answers both in one walk.
 * Build it once per (index, lists) pair with `makeEngineContext`.
 *
 * `remembersVerdicts` says whether a target group's verdict on an
 * institution is kept once made (beside the host's facts and in the
 * group, `judgeInstitution.ts`), so the next email of that institution
 * costs a lookup. It is the default. A job thread's engine remembers none:
 * a job keeps its rows' verdicts by host (`app/rowVerdicts.ts`), so an
 * institution's verdict is asked for about once per host there, and keeping
 * it cost more than it saved (`jobs/jobThreadMemory.ts`).
 */
import { candidateScorer } from "../institutions/CandidateScorer.ts"
import type { InstitutionTable } from "../institutions/InstitutionTable.ts"
import type { EmailLists } from "../policy/EmailLists.ts"
import { HostDirectory as Directory, type HostDirectory, type HostFacts } from "./HostDirectory.ts"

/** What the per-email path asks of hosts: their facts, and values derived from them kept beside them (`HostDirectory`). */
export interface HostFactsSource {
  facts(host: string): HostFacts
  memo<O extends object, A>(facts: HostFacts, owner: O, derive: (owner: O, facts: HostFacts) => A): A
}

export interface EngineContext {
  readonly index: InstitutionTable
  readonly lists: EmailLists
  /** The shared `directory`, or a team's reviewed institutions over it (`ReviewedHosts.ts`). */
  readonly hosts: HostFactsSource
  /** The one host directory every team's context shares. */
  readonly directory: HostDirectory
  readonly remembersVerdicts: boolean
}

const directoryFields = (directory: HostDirectory) => ({ hosts: directory, directory })

export const makeEngineContext = (
  index: InstitutionTable,
  lists: EmailLists,
  options?: { readonly rememberVerdicts?: boolean | undefined }
): EngineContext => ({
  index,
  lists,
  ...directoryFields(new Directory(index, lists)),
  remembersVerdicts: options?.rememberVerdicts ?? true
})

/**
 * Makes now what the first validations would otherwise make on their way:
 * the host directory's key table and the candidate knowledge of unknown
 * hosts (both built on first use, so a start need not wait for them). The
 * daemon calls it once it listens.
 */
export const warmEngineContext = (context: EngineContext): void => {
  void context.directory.size
  candidateScorer(context.index)
}
