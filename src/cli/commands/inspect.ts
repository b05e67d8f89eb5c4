/**
 * `campusgate inspect`: reads emails or bare domains (arguments, or one per
 * line on standard input) and prints one JSON object per line with the
 * format verdict, the institution (name, country, region, type, matched
 * domain, rule, evidence, role, sources) and the policy flags. Output keeps
 * input order and field names are stable: held-out evaluations read them.
 * `--search "tech univ munich"` prints the best-matching institutions
 * instead, one per line.
 */
import { once } from "node:events"
import { existsSync, readFileSync } from "node:fs"
import { createInterface } from "node:readline"
import * as Argument from "effect/cli/Argument"
import * as CliError from "effect/cli/CliError"
import * as Command from "effect/cli/Command"
import * as Flag from "effect/cli/Flag"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import {
  type DatasetSpec,
  datasetFormatOf,
  type InstitutionsService,
  institutionsOf,
  UNKNOWN_DATASET_FORMAT
} from "../../app/Institutions.ts"
import { loadConfig } from "../../config/loadConfig.ts"
import { formatProblem } from "../../domain/errors.ts"
import { configDirFlag, dataDirFlag, defaultConfigDir } from "../options.ts"

/** Reads a dataset file; the format follows the extension (.json Hipo, .csv, .yaml/.yml). */
export const readDatasetFile = (path: string): DatasetSpec => {
  const format = datasetFormatOf(path)
  if (format === undefined) throw new Error(`${path}: ${UNKNOWN_DATASET_FORMAT}`)
  return { name: path, format, content: readFileSync(path, "utf8") }
}

const writeLines = async (
  lines: AsyncIterable<string> | Iterable<string>,
  institutions: InstitutionsService
): Promise<void> => {
  const out = process.stdout
  let buffer = ""
  for await (const raw of lines) {
    const line = raw.replace(/\r$/, "")
    if (line.trim() === "") continue
    buffer += `${JSON.stringify(institutions.inspect(line))}\n`
    if (buffer.length > 65_536) {
      if (!out.write(buffer)) await once(out, "drain")
      buffer = ""
    }
  }
  if (buffer !== "" && !out.write(buffer)) await once(out, "drain")
}

/**
 * The datasets named in the config directory's campusgate.yaml and its data
 * directory (whose imported index, if any, replaces the built-in one), so
 * `inspect` sees what the daemon sees. No config directory at the default
 * place means none; a config that does not load is an error.
 */
const configSources = (
  configDir: string,
  dataDir: string | undefined
): { readonly datasets: ReadonlyArray<DatasetSpec>; readonly dataDir: string | undefined } => {
  if (configDir === defaultConfigDir && !existsSync(configDir)) return { datasets: [], dataDir }
  const loaded = loadConfig({ configDir, dataDir })
  if (!loaded.ok) throw new Error(loaded.problems.map(formatProblem).join("\n"))
  return { datasets: loaded.config.datasets, dataDir: loaded.config.dataDir }
}

export const inspectCommand = Command.make(
  "inspect",
  {
    inputs: Argument.String("email-or-domain").pipe(
      Argument.withDescription("Emails or bare domains; when none are given, lines are read from standard input"),
      Argument.variadic()
    ),
    datasets: Flag.String("dataset").pipe(
      Flag.withDescription(
        "An institution dataset to merge on top of the built-in data and the config's datasets (.json Hipo, .csv, .yaml)"
      ),
      Flag.atLeast(0)
    ),
    search: Flag.String("search").pipe(
      Flag.withDescription('Search institutions by name, acronym or domain instead (e.g. "tech univ munich")'),
      Flag.optional
    ),
    country: Flag.String("country").pipe(
      Flag.withDescription("With --search: only institutions of this country (ISO 3166-1 alpha-2)"),
      Flag.optional
    ),
    limit: Flag.Int("limit").pipe(Flag.withDescription("With --search: how many to print"), Flag.withDefault(10)),
    config: configDirFlag,
    data: dataDirFlag
  },
  Effect.fn("inspect")(function* ({ inputs, datasets, config, data, search, country, limit }) {
    const institutions = yield* Effect.try({
      try: (): InstitutionsService => {
        const sources = configSources(config, Option.getOrUndefined(data))
        return institutionsOf({
          datasets: [...sources.datasets, ...datasets.map(readDatasetFile)],
          dataDir: sources.dataDir
        })
      },
      catch: (error) => new CliError.UserError({ cause: error, userMessage: (error as Error).message })
    })
    if (Option.isSome(search)) {
      const page = institutions.search({
        q: search.value,
        country: Option.getOrUndefined(country)?.toUpperCase(),
        limit
      })
      for (const institution of page.institutions) process.stdout.write(`${JSON.stringify(institution)}\n`)
      return
    }
    const source =
      inputs.length > 0 ? inputs : createInterface({ input: process.stdin, crlfDelay: Number.POSITIVE_INFINITY })
    yield* Effect.promise(() => writeLines(source, institutions))
  })
).pipe(Command.withDescription("Print what Campusgate knows about emails or domains, one JSON object per line"))
