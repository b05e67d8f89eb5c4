/**
 * `templates/<locale>.yaml` in the config directory: overrides of the
 * built-in verification messages (`domain/MessageTemplate.ts` says what a
 * template may hold). Each file is decoded like every config file and each
 * part checked — placeholders, the code or link it must carry, no tracking —
 * with its line and column, so `campusgate check` and a reload refuse a
 * broken template as they refuse a broken offer. A locale with built-in
 * templates may override any part; another locale must give every part.
 * The `page:` section holds the hosted page's words: any of them for a
 * built-in locale; all or none for another (without it, the page is not
 * offered in that language).
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs"
import { join } from "node:path"
import type { ConfigurationProblem } from "../domain/errors.ts"
import { HOSTED_WORD_KEYS } from "../domain/hostedPageWords.ts"
import { BUILT_IN_LOCALES, type MessagePart, TemplateFile, templateProblems } from "../domain/MessageTemplate.ts"
import type { VerificationMethod } from "../domain/VerificationPolicy.ts"
import { displayPath, isResourceFile } from "./layout.ts"
import { decodeYaml, positionOf } from "./yamlDecode.ts"

export const TEMPLATES_DIR = "templates"

const METHODS: ReadonlyArray<VerificationMethod> = ["code", "link"]
const PARTS: ReadonlyArray<MessagePart> = ["subject", "text", "html"]

/** The overrides by locale; problems are added to `problems`. */
export const loadMessageTemplates = (
  configDir: string,
  problems: Array<ConfigurationProblem>
): ReadonlyMap<string, TemplateFile> => {
  const directory = join(configDir, TEMPLATES_DIR)
  const overrides = new Map<string, TemplateFile>()
  if (!existsSync(directory) || !statSync(directory).isDirectory()) return overrides
  for (const name of readdirSync(directory).filter(isResourceFile).sort()) {
    const path = join(directory, name)
    const file = displayPath(path)
    const locale = name.replace(/\.ya?ml$/, "")
    if (!/^[a-z]{2}$/.test(locale)) {
      problems.push({
        file,
        path: "",
        message: `name the file after a two-letter language code, e.g. en.yaml (got "${name}")`
      })
      continue
    }
    const text = readFileSync(path, "utf8")
    const decoded = decodeYaml(TemplateFile, file, text)
    if (!decoded.ok) {
      problems.push(...decoded.problems)
      continue
    }
    const builtIn = (BUILT_IN_LOCALES as ReadonlyArray<string>).includes(locale)
    let valid = true
    for (const method of METHODS) {
      for (const part of PARTS) {
        const value = decoded.value[method]?.[part]
        if (value === undefined) {
          if (!builtIn) {
            valid = false
            problems.push({
              file,
              ...positionOf(text, []),
              path: `${method}.${part}`,
              message: `"${locale}" has no built-in messages, so every part must be given (built in: ${BUILT_IN_LOCALES.join(", ")})`
            })
          }
          continue
        }
        for (const message of templateProblems(method, part, value)) {
          valid = false
          problems.push({ file, ...positionOf(text, [method, part]), path: `${method}.${part}`, message })
        }
      }
    }
    const page = decoded.value.page
    const missing = page === undefined || builtIn ? [] : HOSTED_WORD_KEYS.filter((key) => page[key] === undefined)
    if (missing.length > 0) {
      valid = false
      problems.push({
        file,
        ...positionOf(text, ["page"]),
        path: "page",
        message: `"${locale}" has no built-in page words, so every one must be given (missing: ${missing.join(", ")})`
      })
    }
    if (valid) overrides.set(locale, decoded.value)
  }
  return overrides
}
