/**
 * Target groups and offers given as plain data → a compiled engine over an
 * engine context, or every problem found (decoding, then cross-references).
 */
import { decodeOffers, decodeTargetGroups } from "../domain/decodeResources.ts"
import { type ConfigurationProblem, InvalidConfiguration } from "../domain/errors.ts"
import { Engine } from "./Engine.ts"
import type { EngineContext } from "./targeting/EngineContext.ts"

/** Target groups and offers as plain data, e.g. parsed from YAML or JSON; decoded and checked on load. */
export interface EngineResources {
  readonly targetGroups: ReadonlyArray<unknown>
  readonly offers?: ReadonlyArray<unknown> | undefined
}

/** Decodes resources and compiles an engine, or fails with every problem found. */
export const makeEngine = (
  context: EngineContext,
  resources: EngineResources,
  now?: () => number
): Engine | InvalidConfiguration => {
  const problems: Array<ConfigurationProblem> = []
  const targetGroups = decodeTargetGroups(resources.targetGroups, problems)
  const offers = decodeOffers(resources.offers ?? [], problems)
  if (problems.length > 0) return new InvalidConfiguration({ problems })
  try {
    return Engine.make({ context, targetGroups, offers, now })
  } catch (error) {
    if (error instanceof InvalidConfiguration) return error
    throw error
  }
}
