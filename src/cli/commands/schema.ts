/**
 * `campusgate schema [--out DIR]`: writes the JSON Schema documents of the
 * config files (`campusgate.schema.json`, `target-group.schema.json`,
 * `offer.schema.json`, `api-keys.schema.json`) into DIR (default
 * `./schemas`), creating it, and prints one line per file written. Editors
 * pick them up through a first line such as
 * `# yaml-language-server: $schema=../dist/schemas/target-group.schema.json`.
 * It reads no config; `--config` and `--data` are accepted like everywhere.
 */

import * as CliError from "effect/cli/CliError"
import * as Command from "effect/cli/Command"
import * as Flag from "effect/cli/Flag"
import * as Effect from "effect/Effect"
import { writeJsonSchemas } from "../../config/jsonSchema.ts"
import { displayPath } from "../../config/layout.ts"
import { directoryFlags } from "../options.ts"

export const schemaCommand = Command.make(
  "schema",
  {
    ...directoryFlags,
    out: Flag.String("out").pipe(
      Flag.withDescription("The directory to write the JSON Schema files into (created when missing)"),
      Flag.withMetavar("DIR"),
      Flag.withDefault("./schemas")
    )
  },
  Effect.fn("schema")(function* ({ out }) {
    const written = yield* Effect.try({
      try: () => writeJsonSchemas(out),
      catch: (error) =>
        new CliError.UserError({
          cause: error,
          userMessage: `cannot write the JSON schemas to ${out}: ${(error as Error).message}`
        })
    })
    for (const path of written) yield* Effect.sync(() => process.stdout.write(`wrote ${displayPath(path)}\n`))
  })
).pipe(Command.withDescription("Write JSON Schema files for campusgate.yaml, target groups, offers and api-keys.yaml"))
