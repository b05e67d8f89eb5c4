/**
 * The words of the hosted verification page (`server/hosted/`), by key: the
 * built-in ones for en, de, fr and es are in `server/hosted/hostedWords.ts`;
 * a config directory overrides any of them, or adds a language, with a
 * `page:` section in `templates/<locale>.yaml` (checked by
 * `config/messageTemplates.ts` like the messages: a language without built-in
 * words gives every key). Placeholders are `{{name}}`; values are escaped.
 */
import * as Schema from "effect/Schema"

export const HOSTED_WORD_KEYS = [
  "heading",
  "intro",
  "emailLabel",
  "submit",
  "codeHeading",
  "codeSent",
  "codeLabel",
  "confirm",
  "linkHeading",
  "linkSent",
  "linkContinue",
  "resend",
  "resendWait",
  "resendReady",
  "resent",
  "otherAddress",
  "wrongCode",
  "tooManyAttempts",
  "expired",
  "startAgain",
  "ineligible",
  "limitReached",
  "tooManyMessages",
  "rateLimited",
  "unavailable",
  "notFound",
  "redirectRefused",
  "formExpired",
  "emailRequired",
  "codeRequired",
  "doneHeading",
  "done",
  "doneReturn",
  "backTo",
  "support",
  "privacy",
  "errorTitle",
  "reasonFormat",
  "reasonDisposable",
  "reasonRole",
  "reasonFreeMail",
  "reasonNotInstitution",
  "reasonPlace",
  "reasonOfferClosed"
] as const
export type HostedWordKey = (typeof HOSTED_WORD_KEYS)[number]
export type HostedWords = Readonly<Record<HostedWordKey, string>>

/** A `page:` section: any of the words. */
export const HostedWordsPatch = Schema.Struct(
  Object.fromEntries(HOSTED_WORD_KEYS.map((key) => [key, Schema.optionalKey(Schema.String)])) as {
    readonly [K in HostedWordKey]: Schema.optionalKey<Schema.String>
  }
)
export type HostedWordsPatch = typeof HostedWordsPatch.Type
