/**
 * The read-only data every evaluation consults: the institution index, the
 * email policy lists, and the host directory that answers both in one walk.
 * Build it once per (index, lists) pair with `makeEngineContext`.
 */
import type { InstitutionTable } from "../institutions/InstitutionTable.ts"
import type { EmailLists } from "../policy/EmailLists.ts"
import { HostDirectory } from "./HostDirectory.ts"

export interface EngineContext {
  readonly index: InstitutionTable
  readonly lists: EmailLists
  readonly hosts: HostDirectory
}

export const makeEngineContext = (index: InstitutionTable, lists: EmailLists): EngineContext => ({
  index,
  lists,
  hosts: new HostDirectory(index, lists)
})
