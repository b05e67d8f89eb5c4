/** The signed-in session and its API client, for every screen below the app. */
import { createContext } from "preact"
import { useContext } from "preact/hooks"
import type { Api } from "./api.ts"
import type { Session } from "./apiTypes.ts"

export interface Signed {
  readonly session: Session
  readonly api: Api
}

export const SignedContext = createContext<Signed | undefined>(undefined)

export const useSigned = (): Signed => {
  const signed = useContext(SignedContext)
  if (signed === undefined) throw new Error("a screen of the console rendered without a session")
  return signed
}

/** The scope the Reviews screens need (the navigation lists them only for a key that has it). */
export const REVIEW_SCOPE = "institutions:review"

/** Whether the session's key has a scope (the daemon decides; this only hides what would be refused). */
export const useScope = (...scopes: ReadonlyArray<string>): boolean => {
  const { session } = useSigned()
  return scopes.some((scope) => session.scopes.includes(scope))
}
