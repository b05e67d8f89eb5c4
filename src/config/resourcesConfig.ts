/**
 * Resources given in memory (the library's `createCampusgate({ targetGroups,
 * offers })`) as a loaded config: decoded with the same schemas as the YAML
 * files, with default settings, no API keys and no directories. Every team
 * the resources name is a known team (there is no campusgate.yaml to
 * declare them); the engine checks cross-references when it compiles.
 */
import { decodeOffers, decodeTargetGroups } from "../domain/decodeResources.ts"
import type { ConfigurationProblem } from "../domain/errors.ts"
import type { DatasetSpec } from "../engine/institutions/userDatasets.ts"
import { secretsFrom } from "./environment.ts"
import type { ConfigLoad } from "./loadConfig.ts"
import { valueProblems } from "./schemaProblems.ts"
import { DEFAULT_TEAM, defaultSettings } from "./settingsFile.ts"

/** Target groups and offers as plain data, e.g. parsed from YAML or JSON; decoded and checked on load. */
export interface InMemoryResources {
  readonly targetGroups: ReadonlyArray<unknown>
  readonly offers?: ReadonlyArray<unknown> | undefined
}

export const configFromResources = (
  resources: InMemoryResources,
  datasets: ReadonlyArray<DatasetSpec> = []
): ConfigLoad => {
  const problems: Array<ConfigurationProblem> = []
  const targetGroups = decodeTargetGroups(resources.targetGroups, problems, valueProblems)
  const offers = decodeOffers(resources.offers ?? [], problems, valueProblems)
  if (problems.length > 0) return { ok: false, problems }
  const teams = new Set<string>([DEFAULT_TEAM])
  for (const item of [...targetGroups, ...offers]) if (item.team !== undefined) teams.add(item.team)
  return {
    ok: true,
    config: {
      configDir: undefined,
      dataDir: undefined,
      settings: defaultSettings(),
      secrets: secretsFrom({}),
      teams,
      targetGroups,
      offers,
      apiKeys: [],
      datasets,
      reviewed: [],
      templates: new Map(),
      smtpCa: undefined,
      origins: { targetGroups: new Map(), offers: new Map(), apiKeys: new Map() }
    }
  }
}
