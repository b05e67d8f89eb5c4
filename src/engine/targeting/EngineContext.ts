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
 * it cost more than it saved (`app/jobThreadMemory.ts`).
 */
import type { InstitutionTable } from "../institutions/InstitutionTable.ts"
import type { EmailLists } from "../policy/EmailLists.ts"
import { HostDirectory } from "./HostDirectory.ts"

export interface EngineContext {
  readonly index: InstitutionTable
  readonly lists: EmailLists
  readonly hosts: HostDirectory
  readonly remembersVerdicts: boolean
}

export const makeEngineContext = (
  index: InstitutionTable,
  lists: EmailLists,
  options?: { readonly rememberVerdicts?: boolean | undefined }
): EngineContext => ({
  index,
  lists,
  hosts: new HostDirectory(index, lists),
  remembersVerdicts: options?.rememberVerdicts ?? true
})
