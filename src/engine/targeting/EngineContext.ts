/** The read-only data every evaluation consults: the institution index and the email policy lists. */
import type { InstitutionTable } from "../institutions/InstitutionTable.ts"
import type { EmailLists } from "../policy/EmailLists.ts"

export interface EngineContext {
  readonly index: InstitutionTable
  readonly lists: EmailLists
}
