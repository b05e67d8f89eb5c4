/**
 * The messages a verification sends, as templates: for each method (`code`,
 * `link`) a subject, a plain-text body and an HTML body, per locale. Built
 * in for en, de, fr and es (`verification/defaultTemplates.ts`); a config
 * directory overrides any of them with `templates/<locale>.yaml`
 * (`config/messageTemplates.ts`), checked here so `campusgate check` and
 * the daemon refuse a broken one with its position.
 *
 * Placeholders are `{{name}}`: `offer` (the offer's or target group's
 * name), `institution` (the institution's name, else the address's domain),
 * `minutes` (how long the code or link works), and `code` or `link`, which
 * a message of that method must contain in both bodies. Values are escaped
 * in HTML. The messages hold no tracking: an HTML template may not load
 * anything (no images, scripts, frames, style sheets or `url(...)`).
 */
import * as Schema from "effect/Schema"
import { HostedWordsPatch } from "./hostedPageWords.ts"
import type { VerificationMethod } from "./VerificationPolicy.ts"

/** The locales with built-in templates. */
export const BUILT_IN_LOCALES = ["en", "de", "fr", "es"] as const

export const MessageParts = Schema.Struct({
  subject: Schema.String,
  text: Schema.String,
  html: Schema.String
})
export type MessageParts = typeof MessageParts.Type
export type MessagePart = keyof MessageParts

/** The templates of one locale. */
export interface LocaleTemplates {
  readonly code: MessageParts
  readonly link: MessageParts
}

const SomeParts = Schema.Struct({
  subject: Schema.optionalKey(Schema.String),
  text: Schema.optionalKey(Schema.String),
  html: Schema.optionalKey(Schema.String)
})

/** A `templates/<locale>.yaml` file: any part of any method, and the hosted page's words (`hostedPageWords.ts`). */
export const TemplateFile = Schema.Struct({
  code: Schema.optionalKey(SomeParts),
  link: Schema.optionalKey(SomeParts),
  page: Schema.optionalKey(HostedWordsPatch)
})
export type TemplateFile = typeof TemplateFile.Type

export interface TemplateValues {
  readonly offer: string
  readonly institution: string
  readonly minutes: string
  readonly code?: string | undefined
  readonly link?: string | undefined
}

const PLACEHOLDER = /\{\{\s*([A-Za-z]+)\s*\}\}/g
const COMMON: ReadonlyArray<string> = ["offer", "institution", "minutes"]
const LOADS_SOMETHING = /<\s*(img|script|iframe|frame|object|embed|link|video|audio|source)\b|url\s*\(/i

/** What is wrong with a template part, in plain English (empty when nothing is). */
export const templateProblems = (method: VerificationMethod, part: MessagePart, text: string): Array<string> => {
  const problems: Array<string> = []
  const allowed = [...COMMON, method]
  for (const match of text.matchAll(PLACEHOLDER)) {
    if (!allowed.includes(match[1]!)) {
      problems.push(
        `unknown placeholder {{${match[1]}}}: a ${method} message may use ${allowed.map((name) => `{{${name}}}`).join(", ")}`
      )
    }
  }
  if (part !== "subject" && !new RegExp(`\\{\\{\\s*${method}\\s*\\}\\}`).test(text)) {
    problems.push(`a ${method} message must contain {{${method}}}`)
  }
  if (part === "subject" && /[\r\n]/.test(text.trim())) problems.push("a subject is one line")
  if (part === "html" && LOADS_SOMETHING.test(text)) {
    problems.push(
      "an HTML message may not load anything (images, scripts, frames, style sheets, url(...)): no tracking"
    )
  }
  return problems
}

/** Text as HTML shows it literally. */
export const escapeHtml = (text: string): string =>
  text.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!)

/** The part with its placeholders filled in (escaped for `html`). */
export const renderTemplate = (part: MessagePart, text: string, values: TemplateValues): string => {
  const rendered = text.replace(PLACEHOLDER, (whole, name: string) => {
    const value = (values as unknown as Record<string, string | undefined>)[name]
    if (value === undefined) return whole
    return part === "html" ? escapeHtml(value) : value
  })
  return part === "subject" ? rendered.trim() : rendered
}
