/**
 * Runs each target group's `examples` through the real engine: every
 * `valid:` email must pass and every `invalid:` one must fail. A mismatch
 * carries the position of the example and the engine's explanation of what
 * it actually decided, so the fix is obvious from the report alone.
 */
import type { ConfigurationProblem } from "../domain/errors.ts"
import type { ValidationResult } from "../domain/ValidationResult.ts"
import type { Engine } from "../engine/Engine.ts"
import { displayPath } from "./layout.ts"
import type { LoadedConfig } from "./loadConfig.ts"
import { positionOf } from "./yamlDecode.ts"

export interface ExampleMismatch extends ConfigurationProblem {
  readonly targetGroup: string
  readonly email: string
  readonly expected: "valid" | "invalid"
  readonly reasonCode: string | null
}

export interface ExamplesReport {
  readonly checked: number
  readonly mismatches: ReadonlyArray<ExampleMismatch>
}

const explain = (email: string, expected: "valid" | "invalid", result: ValidationResult): string =>
  expected === "valid"
    ? `"${email}" should be valid but is not: ${result.reason ?? "no reason given"} (${result.reasonCode})`
    : `"${email}" should be invalid but is valid${result.matchedDomain === undefined ? "" : ` (matched ${result.matchedDomain})`}`

export const runExamples = (config: LoadedConfig, engine: Engine): ExamplesReport => {
  let checked = 0
  const mismatches: Array<ExampleMismatch> = []
  for (const group of config.targetGroups) {
    const file = config.origins.targetGroups.get(group.id)
    for (const expected of ["valid", "invalid"] as const) {
      ;(group.examples?.[expected] ?? []).forEach((email, i) => {
        checked++
        const result = engine.validate(email, group.id)
        if (result.isValid === (expected === "valid")) return
        const path = ["examples", expected, i]
        mismatches.push({
          ...(file === undefined ? {} : { file: displayPath(file.path), ...positionOf(file.text, path) }),
          path: `examples.${expected}[${i}]`,
          message: explain(email, expected, result),
          targetGroup: group.id,
          email,
          expected,
          reasonCode: result.reasonCode ?? null
        })
      })
    }
  }
  return { checked, mismatches }
}
