/**
 * How proof of ownership works for an offer: which methods (a one-time code
 * or a link), how long a verification and its messages live, how many wrong
 * codes and messages are allowed, how long a success counts, where a link
 * may redirect, how often one person (a canonical address) may verify, and
 * where verification events are posted, and how the hosted verification
 * page presents the offer (`page`), and whether an OpenID Connect client
 * is told the verified address (`releaseEmail`). An offer's `verification` section
 * sets any of these; the deployment's `verification` section in
 * `campusgate.yaml` gives the rest (`VerificationDefaults`), and
 * `resolvePolicy` is the one place the two are combined.
 *
 * Periods are written for people ("30 seconds", "10 minutes", "365 days")
 * and kept as written, so an offer read back is the offer as written.
 */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { HTTP_PROTOCOLS, urlOf } from "./urls.ts"

export const VerificationMethod = Schema.Literals(["code", "link"])
export type VerificationMethod = typeof VerificationMethod.Type

const PERIOD = /^([1-9][0-9]{0,8}) (second|minute|hour|day)s?$/
const UNIT_MS = { second: 1000, minute: 60_000, hour: 3_600_000, day: 86_400_000 } as const

/** A period such as "30 seconds", "10 minutes", "1 hour" or "365 days". */
export const Period = Schema.String.pipe(
  Schema.check(
    Schema.isPattern(PERIOD, {
      message: 'a period such as "30 seconds", "10 minutes", "1 hour" or "365 days"'
    })
  )
)

/** A period's length in milliseconds (the period is one `Period` accepts). */
export const periodMillis = (period: string): number => {
  const match = PERIOD.exec(period)
  if (match === null) throw new RangeError(`not a period: ${period}`)
  return Number(match[1]) * UNIT_MS[match[2] as keyof typeof UNIT_MS]
}

/** A language of the messages: a two-letter ISO 639-1 code (built in: en, de, fr, es). */
export const Locale = Schema.String.pipe(
  Schema.check(Schema.isPattern(/^[a-z]{2}$/, { message: "a two-letter language code such as en, de, fr or es" }))
)

/** An origin a link may redirect to: `https://shop.example` (or `http://` for localhost). */
export const RedirectOrigin = Schema.String.pipe(
  Schema.check(
    Schema.makeFilter((text: string) => {
      const url = URL.parse(text)
      if (url === null || url.origin !== text) return "an origin: scheme, host and port only, e.g. https://shop.example"
      const local = url.hostname === "localhost" || url.hostname === "127.0.0.1" || url.hostname === "[::1]"
      return url.protocol === "https:" || (url.protocol === "http:" && local)
        ? true
        : "an https origin (http only for localhost)"
    })
  )
)

/** Where verification events are posted: an absolute http(s) URL. */
export const WebhookUrl = Schema.String.pipe(
  Schema.check(
    Schema.makeFilter((text: string) =>
      text.length <= 2048 && urlOf(text, HTTP_PROTOCOLS) !== null
        ? true
        : "an absolute http or https URL (at most 2048 characters)"
    )
  )
)

/** A colour as `#rgb` or `#rrggbb` (the hosted page's accent). */
export const HexColour = Schema.String.pipe(
  Schema.check(Schema.isPattern(/^#([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$/, { message: "a colour such as #1d4ed8" }))
)

/** A link people follow from the hosted page: an https URL, or mailto:. */
export const PageLink = Schema.String.pipe(
  Schema.check(
    Schema.makeFilter((text: string) => {
      const url = URL.parse(text)
      return text.length <= 2048 && url !== null && (url.protocol === "https:" || url.protocol === "mailto:")
        ? true
        : "an https or mailto: URL (at most 2048 characters)"
    })
  )
)

/** A logo file in the config directory: a relative path inside it, ending .png, .svg, .jpg, .jpeg or .webp. */
export const LogoPath = Schema.String.pipe(
  Schema.check(
    Schema.makeFilter((text: string) =>
      /^(?!\/)(?!.*(^|\/)\.\.(\/|$))[^\\:]+\.(png|svg|jpe?g|webp)$/i.test(text)
        ? true
        : "a file in the config directory (a relative path without ..), ending .png, .svg, .jpg, .jpeg or .webp"
    )
  )
)

/** Text of 1 to `max` characters. */
const textOfLength = (max: number) =>
  Schema.String.pipe(
    Schema.check(
      Schema.makeFilter((text: string) => (text.length >= 1 && text.length <= max ? true : `1 to ${max} characters`))
    )
  )

/**
 * How the hosted verification page (`GET /verify/{offerId}`) presents an
 * offer; every field optional: the offer's name, no logo, a blue accent, no
 * links and no notice by default. The logo is read when the config loads
 * (`config/pageLogos.ts`) and served from the daemon itself.
 */
export const PagePresentation = Schema.Struct({
  displayName: Schema.optionalKey(textOfLength(100)),
  logo: Schema.optionalKey(LogoPath),
  accentColor: Schema.optionalKey(HexColour),
  supportUrl: Schema.optionalKey(PageLink),
  privacyUrl: Schema.optionalKey(PageLink),
  privacyNotice: Schema.optionalKey(textOfLength(2000))
})
export type PagePresentation = typeof PagePresentation.Type

const PositiveInt = Schema.Int.pipe(Schema.check(Schema.isGreaterThan(0, { message: "a whole number above 0" })))
const CodeLength = Schema.Int.pipe(
  Schema.check(Schema.isBetween({ minimum: 6, maximum: 10 }, { message: "between 6 and 10 digits" }))
)

/** The fields an offer may set and the deployment gives defaults for. */
const policyFields = {
  methods: Schema.Array(VerificationMethod).pipe(
    Schema.check(Schema.isMinLength(1, { message: "at least one method" }))
  ),
  locale: Locale,
  codeLength: CodeLength,
  lifetime: Period,
  maxAttempts: PositiveInt,
  resendAfter: Period,
  maxMessagesPerAddress: PositiveInt,
  messageWindow: Period,
  validFor: Period,
  reminderBefore: Period,
  redirectOrigins: Schema.Array(RedirectOrigin),
  maxVerificationsPerAddress: PositiveInt,
  redemptionWindow: Period,
  webhookUrl: WebhookUrl,
  page: PagePresentation,
  /** Whether an OpenID Connect client that asks for the `email` scope is told the verified address (`docs/verification.md`). */
  releaseEmail: Schema.Boolean
}

/** An offer's `verification` section: every field optional, the deployment's defaults fill the rest. */
export const VerificationPolicy = Schema.Struct({
  methods: Schema.optionalKey(policyFields.methods),
  locale: Schema.optionalKey(policyFields.locale),
  codeLength: Schema.optionalKey(policyFields.codeLength),
  lifetime: Schema.optionalKey(policyFields.lifetime),
  maxAttempts: Schema.optionalKey(policyFields.maxAttempts),
  resendAfter: Schema.optionalKey(policyFields.resendAfter),
  maxMessagesPerAddress: Schema.optionalKey(policyFields.maxMessagesPerAddress),
  messageWindow: Schema.optionalKey(policyFields.messageWindow),
  validFor: Schema.optionalKey(policyFields.validFor),
  reminderBefore: Schema.optionalKey(policyFields.reminderBefore),
  redirectOrigins: Schema.optionalKey(policyFields.redirectOrigins),
  maxVerificationsPerAddress: Schema.optionalKey(policyFields.maxVerificationsPerAddress),
  redemptionWindow: Schema.optionalKey(policyFields.redemptionWindow),
  webhookUrl: Schema.optionalKey(policyFields.webhookUrl),
  page: Schema.optionalKey(policyFields.page),
  releaseEmail: Schema.optionalKey(policyFields.releaseEmail)
})
export type VerificationPolicy = typeof VerificationPolicy.Type

const withDefault = <S extends Schema.Top>(schema: S, value: S["Encoded"]) =>
  schema.pipe(Schema.withDecodingDefaultKey(Effect.succeed(value as never)))

/**
 * The deployment's defaults (`verification` in campusgate.yaml), the
 * issue's defaults when absent: codes of 6 digits valid 10 minutes, only the
 * latest one valid, 5 attempts, a resend after 30 seconds, at most 5
 * messages an hour to one address, a success valid 365 days; no redirect
 * origins, no redemption limit, no webhook, no reminder.
 */
export const verificationDefaultFields = {
  methods: withDefault(policyFields.methods, ["code", "link"]),
  locale: withDefault(policyFields.locale, "en"),
  codeLength: withDefault(policyFields.codeLength, 6),
  lifetime: withDefault(policyFields.lifetime, "10 minutes"),
  maxAttempts: withDefault(policyFields.maxAttempts, 5),
  resendAfter: withDefault(policyFields.resendAfter, "30 seconds"),
  maxMessagesPerAddress: withDefault(policyFields.maxMessagesPerAddress, 5),
  messageWindow: withDefault(policyFields.messageWindow, "1 hour"),
  validFor: withDefault(policyFields.validFor, "365 days"),
  reminderBefore: Schema.optionalKey(policyFields.reminderBefore),
  redirectOrigins: withDefault(policyFields.redirectOrigins, []),
  maxVerificationsPerAddress: Schema.optionalKey(policyFields.maxVerificationsPerAddress),
  redemptionWindow: withDefault(policyFields.redemptionWindow, "365 days"),
  webhookUrl: Schema.optionalKey(policyFields.webhookUrl),
  page: Schema.optionalKey(policyFields.page),
  releaseEmail: withDefault(policyFields.releaseEmail, false)
}
export const VerificationDefaults = Schema.Struct(verificationDefaultFields)
export type VerificationDefaults = typeof VerificationDefaults.Type

/** An offer's policy in force, periods in milliseconds. */
export interface ResolvedPolicy {
  readonly methods: ReadonlyArray<VerificationMethod>
  readonly locale: string
  readonly codeLength: number
  readonly lifetimeMs: number
  readonly maxAttempts: number
  readonly resendAfterMs: number
  readonly maxMessagesPerAddress: number
  readonly messageWindowMs: number
  readonly validForMs: number
  readonly reminderBeforeMs: number | undefined
  readonly redirectOrigins: ReadonlyArray<string>
  readonly maxVerificationsPerAddress: number | undefined
  readonly redemptionWindowMs: number
  readonly webhookUrl: string | undefined
  /** The hosted page's presentation: the offer's own `page`, else the deployment's (not merged field by field). */
  readonly page?: PagePresentation | undefined
  /** Whether OpenID Connect clients asking for the `email` scope get the address (default false). */
  readonly releaseEmail: boolean
}

/** The policy in force: each field of the offer's section, else the deployment's. */
export const resolvePolicy = (
  defaults: VerificationDefaults,
  offer: VerificationPolicy | undefined = undefined
): ResolvedPolicy => {
  const policy = { ...defaults, ...offer }
  return {
    methods: policy.methods,
    locale: policy.locale,
    codeLength: policy.codeLength,
    lifetimeMs: periodMillis(policy.lifetime),
    maxAttempts: policy.maxAttempts,
    resendAfterMs: periodMillis(policy.resendAfter),
    maxMessagesPerAddress: policy.maxMessagesPerAddress,
    messageWindowMs: periodMillis(policy.messageWindow),
    validForMs: periodMillis(policy.validFor),
    reminderBeforeMs: policy.reminderBefore === undefined ? undefined : periodMillis(policy.reminderBefore),
    redirectOrigins: policy.redirectOrigins,
    maxVerificationsPerAddress: policy.maxVerificationsPerAddress,
    redemptionWindowMs: periodMillis(policy.redemptionWindow),
    webhookUrl: policy.webhookUrl,
    page: policy.page,
    releaseEmail: policy.releaseEmail
  }
}
