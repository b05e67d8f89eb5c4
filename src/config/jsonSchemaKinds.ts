/**
 * What the JSON Schema documents of a config directory's files say beyond
 * what Effect generates from their schemas (`config/jsonSchema.ts` puts it
 * together): each file kind's name, title and description, a minimal file
 * to read defaults from, and, by field path, the patterns Effect leaves out
 * and the descriptions an editor shows on hover.
 */
import type * as Schema from "effect/Schema"
import { ApiKeyId, ApiKeysFile, KeyHash } from "../domain/ApiKey.ts"
import { OfferId, TargetGroupId, TeamId } from "../domain/Identifiers.ts"
import { Instant, Offer } from "../domain/Offer.ts"
import { OidcClient, OidcClientId } from "../domain/OidcClient.ts"
import { DomainName, HostPattern, TargetGroup } from "../domain/TargetGroup.ts"
import { HexColour } from "../domain/VerificationPolicy.ts"
import { Settings } from "./Settings.ts"

export type JsonObject = { [key: string]: unknown }

export const isObject = (value: unknown): value is JsonObject =>
  typeof value === "object" && value !== null && !Array.isArray(value)

const sentence = (text: string): string => {
  const capitalised = text.charAt(0).toUpperCase() + text.slice(1)
  return /[.?!]$/.test(capitalised) ? capitalised : `${capitalised}.`
}

/** The failure message of a schema's first check that has one (the filter's own words). */
const checkMessage = (schema: Schema.Top): string | undefined => {
  for (const check of schema.ast.checks ?? []) {
    const message = check.annotations?.message
    if (typeof message === "string") return message
  }
  return undefined
}

/** `pattern` and description of a string schema checked with `Schema.isPattern`. */
const patterned = (schema: Schema.Top): JsonObject => {
  for (const check of schema.ast.checks ?? []) {
    const representation = check.annotations?.representation
    if (representation?.id === "effect/schema/isPattern" && isObject(representation.payload)) {
      const { source } = representation.payload
      if (typeof source !== "string") continue
      const message = check.annotations?.message
      return { pattern: source, ...(typeof message === "string" ? { description: sentence(message) } : {}) }
    }
  }
  throw new Error(`jsonSchema: ${String(schema.ast)} has no pattern check`)
}

/**
 * The form `Instant` accepts (its filter is a function, so Effect cannot
 * export it): date, time with optional seconds and fraction, and an offset.
 */
export const instantPattern = "^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}(:\\d{2}(\\.\\d{1,9})?)?(Z|[+-]\\d{2}:\\d{2})$"

const instant = (what: string): JsonObject => ({
  pattern: instantPattern,
  description: `${what}: ${checkMessage(Instant) ?? "an ISO 8601 date-time with a time zone"}.`,
  examples: ["2026-09-01T00:00:00Z"]
})

/**
 * Additions by field path: `a.b` names property `b` of property `a`, a
 * trailing `[]` the items of an array. A path the generated schema lacks is
 * an error, so a renamed field cannot leave a stale description behind.
 */
export type Additions = ReadonlyArray<readonly [path: string, additions: JsonObject]>

const describe = (description: string): JsonObject => ({ description })

const targetGroupAdditions: Additions = [
  ["id", { ...patterned(TargetGroupId), description: "Unique id, referenced by offers and API calls." }],
  ["name", describe("Shown in validation results.")],
  ["description", describe("Free text for people.")],
  [
    "team",
    {
      ...patterned(TeamId),
      description: "The owning team (declared in campusgate.yaml): only its offers may use the group. Absent: shared."
    }
  ],
  [
    "criteria",
    describe(
      "An email is valid when its format is valid, no deny rule is the most specific match and at least one allow source (institutions, domains, patterns) matches with all its filters passing."
    )
  ],
  ["criteria.institutions", describe("The host belongs to an academic institution passing every given filter.")],
  ["criteria.institutions.types", describe("Accepted institution types; absent: any.")],
  ["criteria.institutions.countries", describe("Accepted countries (ISO 3166-1 alpha-2); absent: any.")],
  [
    "criteria.institutions.regions",
    describe(
      "Accepted regions (ISO 3166-2, e.g. DE-BY); absent: any. The institution's region must be known: the built-in data has it where ROR or a .us zone gives it, datasets in campusgate.yaml can add regions."
    )
  ],
  [
    "criteria.institutions.roles",
    describe(
      "Whom the host must serve: student, staff, alumni or mixed (a host with no label saying whom, such as mit.edu, which passes when student or staff is listed). Absent: students and staff, not alumni."
    )
  ],
  [
    "criteria.institutions.minConfidence",
    describe(
      "The least confidence (low, medium, high) a fact the filters judge must have: a type, country or region known with less counts as unknown. Every fact carries its confidence and evidence; a type inferred from a domain's words or its zone's members is low or medium. Absent: low, every fact counts."
    )
  ],
  [
    "criteria.institutions.acceptCandidates",
    describe(
      "Accept a domain no source lists when its candidate score (how likely it is an institution, 0 to 1, from the domain alone) is at least minScore: valid with reason code LIKELY_INSTITUTION and low confidence in its facts. Absent: such a domain is refused as UNKNOWN_INSTITUTION, its candidate attached. The docs give the recommended score."
    )
  ],
  ["criteria.institutions.acceptCandidates.minScore", describe("The least candidate score accepted, 0 to 1.")],
  [
    "criteria.institutions.includeSuffixRules",
    describe(
      "Accept hosts matched only by an academic suffix rule, a zone such as *.edu, *.ac.XX or *.k12.XX.us, with no listed institution; the zone's policy gives their country and, where it admits one kind, their type."
    )
  ],
  ["criteria.domains", describe("Host names; an entry covers its sub-domains and the most specific entry wins.")],
  ["criteria.domains.allow", describe("Hosts accepted (with their sub-domains).")],
  ["criteria.domains.allow[]", patterned(DomainName)],
  ["criteria.domains.deny", describe("Hosts refused (with their sub-domains), also when an institution matches.")],
  ["criteria.domains.deny[]", patterned(DomainName)],
  [
    "criteria.patterns",
    describe('Host globs: "*" matches characters inside one label, a leading "*." one or more labels.')
  ],
  ["criteria.patterns.allow", describe("Globs of hosts accepted, e.g. *.ac.uk or students.*.edu.")],
  ["criteria.patterns.allow[]", patterned(HostPattern)],
  ["criteria.patterns.deny", describe("Globs of hosts refused, e.g. alumni.*.ac.uk.")],
  ["criteria.patterns.deny[]", patterned(HostPattern)],
  ["criteria.email", describe("The email policy.")],
  ["criteria.email.rejectDisposable", describe("Refuse disposable (throw-away) email services.")],
  ["criteria.email.rejectRoleAccounts", describe("Refuse role accounts such as admin@, info@, office@.")],
  ["criteria.email.rejectFreeMail", describe("Refuse free email providers such as gmail.com.")],
  ["criteria.email.rejectAbused", describe("Refuse institutions known to hand out addresses to outsiders.")],
  ["criteria.email.rejectConfusable", describe("Refuse internationalised domains that imitate others.")],
  ["criteria.email.allowQuotedLocalPart", describe('Accept quoted local parts ("john doe"@example.edu).')],
  ["criteria.email.allowIpLiteral", describe("Accept IP-address hosts (user@[192.0.2.1]).")],
  [
    "criteria.email.allowSpecialUseDomains",
    describe(
      "Accept special-use and reserved names (example.com, .test, .local, .onion, .internal, ...), which are refused by default."
    )
  ],
  ["examples", describe("Emails `campusgate check` validates against this group.")],
  ["examples.valid", describe("Emails this group must accept.")],
  ["examples.invalid", describe("Emails this group must refuse.")]
]

/** `verification.page`, in an offer and in campusgate.yaml. */
const pageAdditions: Additions = [
  [
    "verification.page",
    describe(
      "How the hosted verification page (/verify/{offerId}) presents the offer. In an offer it replaces campusgate.yaml's as a whole."
    )
  ],
  ["verification.page.displayName", describe("The name at the top of the page; default: the offer's name.")],
  [
    "verification.page.logo",
    describe(
      "A PNG, SVG, JPEG or WebP file in the config directory (a relative path), at most 256 KB, served by the daemon."
    )
  ],
  [
    "verification.page.accentColor",
    {
      ...patterned(HexColour),
      description: "The buttons' colour (#rgb or #rrggbb); their text is black or white, whichever reads better."
    }
  ],
  ["verification.page.supportUrl", describe("A help link: https or mailto:.")],
  ["verification.page.privacyUrl", describe("A privacy link: https or mailto:.")],
  ["verification.page.privacyNotice", describe("A short notice under the form, as plain text.")],
  [
    "verification.releaseEmail",
    describe(
      "Tell an OpenID Connect client that asks for the email scope the verified address (email, email_verified). Default false: the client gets only the pseudonymous sub and the eligibility."
    )
  ]
]

const clientAdditions: Additions = [
  ["id", { ...patterned(OidcClientId), description: "The client_id the relying party sends." }],
  ["name", describe("Shown to people and in logs.")],
  [
    "type",
    describe(
      "public: an app in the browser or on a device, no secret (PKCE alone); confidential: a backend that authenticates with client_secret_basic."
    )
  ],
  ["redirectUris", describe("Where the browser may be sent back, compared exactly: https (http only for localhost).")],
  [
    "allowedOffers",
    describe(
      "The offers this client may ask eligibility for (the offer parameter); with one, the parameter may be left out."
    )
  ],
  [
    "secretHashes",
    describe(
      "Confidential clients: hashes of the secret, as `campusgate clients secret` prints them; list the old and the new one while the secret changes."
    )
  ]
]

const offerAdditions: Additions = [
  ["id", { ...patterned(OfferId), description: "Unique id, referenced by API calls." }],
  ["team", { ...patterned(TeamId), description: "The owning team, declared in campusgate.yaml." }],
  ["name", describe("Shown in validation results.")],
  ["description", describe("Free text for people.")],
  [
    "targetGroups",
    describe("Ids of the target groups, shared or of this offer's team: the email is eligible when any matches.")
  ],
  ["targetGroups[]", patterned(TargetGroupId)],
  [
    "status",
    describe(
      "What people set. An active offer with a startsAt/endsAt window is scheduled before it and expired after it."
    )
  ],
  ["startsAt", instant("When the offer opens")],
  ["endsAt", instant("When the offer closes (after startsAt)")],
  ...pageAdditions
]

const rateLimitAdditions = (name: string, what: string): Additions => [
  [`rateLimits.${name}`, describe(what)],
  [`rateLimits.${name}.requests`, describe("Requests allowed per window, per API key.")],
  [`rateLimits.${name}.windowSeconds`, describe("The window, in seconds.")]
]

const settingsAdditions: Additions = [
  ["server", describe("The daemon's HTTP server.")],
  ["server.host", describe("The address to listen on; env CAMPUSGATE_HOST.")],
  ["server.port", describe("The port (0 picks a free one); env CAMPUSGATE_PORT.")],
  [
    "server.maxBodyBytes",
    describe(
      "Largest request body accepted, in bytes (bulk-async uploads have their own limit); env CAMPUSGATE_MAX_BODY_BYTES."
    )
  ],
  ["server.shutdownTimeoutSeconds", describe("How long a graceful shutdown waits for in-flight requests.")],
  [
    "dataDir",
    describe(
      "Where API-created resources, usage statistics and jobs live, relative to the config directory. Absent: the --data flag, CAMPUSGATE_DATA, or ./data."
    )
  ],
  ["teams", describe("Known teams: every target group (unless shared), offer and API key names one.")],
  ["teams[].id", patterned(TeamId)],
  ["teams[].name", describe("A readable name.")],
  [
    "datasets",
    describe(
      "Institution datasets merged on top of the built-in index (Hipo JSON, CSV or YAML), relative to this file."
    )
  ],
  ["limits", describe("Upper bounds for bulk validation and asynchronous jobs.")],
  [
    "limits.bulkMaxEmails",
    describe(
      "Emails in one bulk validation request, and pairs in one batch offer request (the served OpenAPI document says the bound in force)."
    )
  ],
  ["limits.jobMaxEmails", describe("Emails in one asynchronous job.")],
  ["limits.jobMaxBodyBytes", describe("Largest asynchronous job upload, in bytes.")],
  [
    "limits.jobUploadsPerKey",
    describe("Job uploads one API key may send at the same time; more are answered 429 with Retry-After.")
  ],
  ["rateLimits", describe("Requests per window and per API key, by kind of request.")],
  ...rateLimitAdditions("bulk", "Bulk validation and batch offer processing."),
  ...rateLimitAdditions("jobs", "Job submissions (bulk-async), a budget apart from bulk."),
  ...rateLimitAdditions("validate", "Single validations."),
  ...rateLimitAdditions("default", "Everything else (reads and writes of offers, target groups, jobs)."),
  ...rateLimitAdditions("signIn", "Console sign-ins, per client address (whether the key is good or not)."),
  ...rateLimitAdditions("hostedFlow", "Form submissions on the hosted verification page, per client address."),
  ...pageAdditions,
  ["jobs", describe("Asynchronous bulk jobs.")],
  ["jobs.concurrency", describe("Jobs processed at once.")],
  ["jobs.maxQueued", describe("Jobs waiting beyond this answer 503.")],
  ["jobs.retentionHours", describe("How long finished jobs and their results are kept.")],
  ["statistics", describe("Usage statistics per offer.")],
  ["statistics.enabled", describe("Count validations against offers; off: offer usage stays empty.")],
  [
    "statistics.flushIntervalMs",
    describe("How often counters are written to the data directory (a crash loses at most this much).")
  ],
  ["reviews", describe("The institution review queue: unknown domains the teams' traffic met.")],
  [
    "reviews.maxDomainsPerTeam",
    describe("The most undecided domains a team's queue keeps; past it the least met are dropped and counted.")
  ],
  ["logging", describe("Logging.")],
  ["logging.level", describe("The lowest level logged; env CAMPUSGATE_LOG_LEVEL.")],
  ["logging.logEmails", describe("Write full email addresses in logs (off: only their domain).")],
  ["console", describe("The operator console at /console.")],
  [
    "console.sessionMinutes",
    describe(
      "How long a console session lasts after sign-in, never beyond its key's expiry; lowering it shortens sessions already open."
    )
  ]
]

const apiKeysAdditions: Additions = [
  ["keys", describe("Managed with `campusgate keys create|list|revoke`; only hashes are stored, never keys.")],
  ["keys[].id", patterned(ApiKeyId)],
  ["keys[].name", describe("What the key is for.")],
  ["keys[].team", { ...patterned(TeamId), description: "The team the key acts for." }],
  ["keys[].scopes", describe("What the key may do.")],
  ["keys[].hash", patterned(KeyHash)],
  ["keys[].createdAt", instant("When the key was created")],
  ["keys[].expiresAt", instant("When the key stops working")],
  ["keys[].revokedAt", instant("When the key was revoked")]
]

export interface Kind {
  readonly fileName: string
  readonly title: string
  readonly description: string
  readonly schema: Schema.ConstraintDecoder<unknown>
  /** A minimal valid file, with every optional object present whose own defaults should be read. */
  readonly probe: unknown
  readonly additions: Additions
}

export const kinds: ReadonlyArray<Kind> = [
  {
    fileName: "campusgate.schema.json",
    title: "Campusgate settings (campusgate.yaml)",
    description:
      "Deploy-wide settings of a Campusgate config directory. Every field has a default, so an empty file works; relative paths resolve against the config directory, and CAMPUSGATE_* environment variables override deploy-time values.",
    schema: Settings,
    probe: {},
    additions: settingsAdditions
  },
  {
    fileName: "target-group.schema.json",
    title: "Campusgate target group",
    description:
      "Who an offer is for; one file per target group in target-groups/. Criteria by type: institutions (types, countries, regions), domain lists, host patterns and an email policy.",
    schema: TargetGroup,
    probe: { id: "probe", name: "probe", criteria: { institutions: {}, domains: {}, patterns: {} }, examples: {} },
    additions: targetGroupAdditions
  },
  {
    fileName: "offer.schema.json",
    title: "Campusgate offer",
    description:
      "An offer of one team; one file per offer in offers/. An email is eligible when any of its target groups matches and the offer is active; startsAt must be before endsAt.",
    schema: Offer,
    probe: { id: "probe", team: "probe", name: "probe", targetGroups: ["probe"], status: "draft" },
    additions: offerAdditions
  },
  {
    fileName: "client.schema.json",
    title: "Campusgate OpenID Connect client",
    description:
      "A relying party of the OpenID Connect provider; one file per client in clients/. Code flow with PKCE (S256) only.",
    schema: OidcClient,
    probe: {
      id: "probe",
      name: "probe",
      type: "public",
      redirectUris: ["https://probe.example/cb"],
      allowedOffers: ["probe"]
    },
    additions: clientAdditions
  },
  {
    fileName: "api-keys.schema.json",
    title: "Campusgate API keys (api-keys.yaml)",
    description:
      "API keys of the daemon, each acting for one team with some scopes. Managed with `campusgate keys`; only each key's SHA-256 hash is stored.",
    schema: ApiKeysFile,
    probe: { keys: [] },
    additions: apiKeysAdditions
  }
]
