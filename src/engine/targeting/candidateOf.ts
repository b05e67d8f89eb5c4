/**
 * Which unknown hosts get a candidate score: every host no source lists,
 * but a mail provider's or a throwaway address's (`gmail.com` is unknown
 * to the institution data, and no institution). One rule for the answer's
 * `candidate`, `inspect` and the review queue, which counts only hosts with
 * a candidate.
 */
import type { Candidate } from "../../domain/InstitutionReview.ts"
import { candidateScorer, type Scored } from "../institutions/CandidateScorer.ts"
import type { EngineContext } from "./EngineContext.ts"

/** The host's candidate and its sentence, or null; `facts`: what the caller knows of the host already. */
export const scoredCandidate = (
  context: EngineContext,
  host: string,
  facts?: { readonly freeMail: boolean; readonly disposable: boolean }
): Scored | null => {
  const provider =
    facts === undefined
      ? context.lists.isFreeMail(host) || context.lists.isDisposable(host)
      : facts.freeMail || facts.disposable
  return provider ? null : candidateScorer(context.index).scored(host)
}

export const candidateOf = (context: EngineContext, host: string): Candidate | null =>
  scoredCandidate(context, host)?.candidate ?? null
