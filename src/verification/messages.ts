/**
 * A verification message in its locale: the built-in templates with the
 * config directory's overrides laid over them, placeholders filled in. A
 * locale without templates falls back to English; a regional tag such as
 * `de-AT` uses `de`.
 */
import {
  type LocaleTemplates,
  type MessageParts,
  renderTemplate,
  type TemplateFile,
  type TemplateValues
} from "../domain/MessageTemplate.ts"
import type { VerificationMethod } from "../domain/VerificationPolicy.ts"
import { defaultTemplates, type LinkPageWords, linkPageWords } from "./defaultTemplates.ts"

const FALLBACK = "en"

/** The locale whose messages are used for `requested`: itself, its language, or English. */
export const messageLocale = (requested: string, overrides: ReadonlyMap<string, TemplateFile>): string => {
  const language = requested.toLowerCase().split(/[-_]/)[0] ?? ""
  return language in defaultTemplates || overrides.has(language) ? language : FALLBACK
}

const partsOf = (
  locale: string,
  method: VerificationMethod,
  overrides: ReadonlyMap<string, TemplateFile>
): MessageParts => {
  const builtIn: LocaleTemplates | undefined = defaultTemplates[locale]
  const override = overrides.get(locale)?.[method]
  // A locale without built-in templates is complete (config/messageTemplates.ts checks it).
  return { ...(builtIn ?? defaultTemplates[FALLBACK]!)[method], ...override }
}

/** Subject, text and HTML of a message of `method` in `locale`. */
export const renderMessage = (
  locale: string,
  method: VerificationMethod,
  overrides: ReadonlyMap<string, TemplateFile>,
  values: TemplateValues
): MessageParts => {
  const parts = partsOf(locale, method, overrides)
  return {
    subject: renderTemplate("subject", parts.subject, values),
    text: renderTemplate("text", parts.text, values),
    html: renderTemplate("html", parts.html, values)
  }
}

/** The words of the link page in `locale` (English when there are none). */
export const pageWords = (locale: string): LinkPageWords => linkPageWords[locale] ?? linkPageWords[FALLBACK]!
