/**
 * `campusgate keys create|list|revoke`: API keys for the daemon. `create`
 * prints the new key once (only its hash is stored: in the data directory
 * or the shared store, or with `--config-file` in the config directory's
 * `api-keys.yaml`, to commit it); `list` never prints
 * hashes unless asked for JSON; `revoke` marks a key revoked in whichever
 * `api-keys.yaml` holds it (or in Redis, when the deployment's store is
 * Redis: every daemon refuses it within a second). `keys rotate-signing` retires the key that signs
 * eligibility tokens (it stays published until its tokens expire) and makes
 * a new one; a running daemon signs with it from its next token on.
 */
import { resolve } from "node:path"
import * as Console from "effect/Console"
import * as Argument from "effect/cli/Argument"
import * as CliError from "effect/cli/CliError"
import * as Command from "effect/cli/Command"
import * as Flag from "effect/cli/Flag"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { Keys, type KeysService } from "../../app/Keys.ts"
import type { InvalidApiKeyRequest } from "../../app/KeysError.ts"
import { loadDirectory } from "../../app/sources.ts"
import { displayPath, SETTINGS_FILE } from "../../config/layout.ts"
import { teamsOf } from "../../config/settingsFile.ts"
import { openStore } from "../../deployment/stores.ts"
import { allScopes, Scope } from "../../domain/ApiKey.ts"
import { formatProblem } from "../../domain/errors.ts"
import { TeamId } from "../../domain/Identifiers.ts"
import { ApiKeyStore, ApiKeysError } from "../../keys/ApiKeyStore.ts"
import type { KeyDirectories } from "../../keys/apiKeyFiles.ts"
import { keyStatus, parseExpiry } from "../../keys/apiKeys.ts"
import { SigningKeyStore } from "../../verification/SigningKeyStore.ts"
import { activeKey } from "../../verification/signing.ts"
import { rotateSigningKeys } from "../../verification/verificationTokens.ts"
import { dataDirectory, readSettings } from "../directories.ts"
import { directoryFlags } from "../options.ts"
import { table } from "../table.ts"

const userError = (message: string, cause?: unknown) =>
  new CliError.UserError({ cause: cause ?? new Error(message), userMessage: message })

/** Runs `f`, turning what it throws into a `UserError` carrying the thrown error's message. */
const attempt = <A>(f: () => A) => Effect.try({ try: f, catch: (error) => userError((error as Error).message, error) })

/** The key directories, resolved as `loadConfig` resolves them. */
const directories = (config: string, data: Option.Option<string>) =>
  attempt((): KeyDirectories => ({ configDir: config, dataDir: dataDirectory(config, data) }))

/**
 * Runs `use` over the deployment's key store (the files, or Redis when
 * campusgate.yaml says so), turning a failure's reason into a `UserError`.
 */
const withKeys = <A>(
  dirs: KeyDirectories,
  use: (keys: KeysService) => Effect.Effect<A, ApiKeysError | InvalidApiKeyRequest>
) =>
  Effect.scoped(
    Effect.flatMap(
      openStore(dirs, ApiKeyStore, (stores) => stores.keys),
      ({ store }) => use(Keys.make(store))
    )
  ).pipe(
    Effect.mapError((error) => {
      const reason = error instanceof ApiKeysError ? error.reason : error
      return userError((reason as Error).message, reason)
    })
  )

/** The teams a key may name (`loadConfig` rejects keys of other teams). */
const knownTeams = (config: string) => attempt(() => teamsOf(readSettings(config)))

const isScope = Schema.is(Scope)
const isTeamId = Schema.is(TeamId)

const parseScopes = (values: ReadonlyArray<string>) => {
  const scopes = values.flatMap((value) => value.split(",")).map((value) => value.trim())
  const invalid = scopes.filter((scope) => !isScope(scope))
  if (invalid.length > 0 || scopes.length === 0) {
    const named = invalid.map((scope) => JSON.stringify(scope)).join(", ")
    return Effect.fail(
      userError(`Unknown scope ${named || '""'}. Valid scopes: ${allScopes.join(", ")} (repeat --scope for several).`)
    )
  }
  return Effect.succeed(scopes.filter(isScope))
}

const create = Command.make(
  "create",
  {
    ...directoryFlags,
    team: Flag.String("team").pipe(Flag.withDescription("The team the key acts for (a team id)")),
    scopes: Flag.String("scope").pipe(
      Flag.withDescription(`What the key may do; repeat for several. One of: ${allScopes.join(", ")}`),
      Flag.atLeast(1)
    ),
    expires: Flag.String("expires").pipe(
      Flag.withDescription("When the key expires: 12h, 90d, 4w, 1y, or a date such as 2027-01-01 (default: never)"),
      Flag.optional
    ),
    name: Flag.String("name").pipe(Flag.withDescription("A label to recognise the key by"), Flag.optional),
    configFile: Flag.Boolean("config-file").pipe(
      Flag.withDescription(
        "Store the key's hash in the config directory's api-keys.yaml, to commit it (default: the data directory, or the shared store)"
      ),
      Flag.withDefault(false)
    ),
    json: Flag.Boolean("json").pipe(
      Flag.withDescription('Print {"id","key","team","scopes","expiresAt"} as JSON'),
      Flag.withDefault(false)
    )
  },
  Effect.fn("keys.create")(function* ({ config, data, team, scopes, expires, name, configFile, json }) {
    if (!isTeamId(team)) {
      return yield* userError(
        `Invalid --team ${JSON.stringify(team)}: a team id is 1-64 characters: lower-case letters, digits, ".", "_" or "-", starting with a letter or digit.`
      )
    }
    const teams = yield* knownTeams(config)
    if (!teams.has(team)) {
      return yield* userError(
        `Unknown team "${team}": declare it under teams in ${SETTINGS_FILE} (known: ${[...teams].join(", ")}).`
      )
    }
    const validScopes = yield* parseScopes(scopes)
    const now = Date.now()
    const expiresAt = Option.isSome(expires)
      ? yield* attempt(() => parseExpiry(expires.value, now)).pipe(
          Effect.mapError((error) => userError(`--expires: ${error.message}`, error))
        )
      : undefined
    const dirs = yield* directories(config, data)
    // Into the data directory (or the shared store) unless asked: a key made to try the daemon never lands in git.
    const created = yield* withKeys(dirs, (keys) =>
      keys.create(
        {
          team,
          scopes: validScopes,
          now,
          ...(Option.isSome(name) ? { name: name.value } : {}),
          ...(expiresAt === undefined ? {} : { expiresAt })
        },
        configFile
      )
    )
    if (json) {
      const { id, key, scopes: granted, expiresAt: expiry } = created
      yield* Console.log(JSON.stringify({ id, key, team: created.team, scopes: granted, expiresAt: expiry }))
      return
    }
    yield* Console.log(
      [
        `Created API key ${created.id} for team ${created.team}:`,
        "",
        created.key,
        "",
        "Copy it now: it will not be shown again (only its hash is stored).",
        "",
        `  id:      ${created.id}`,
        ...(created.name === undefined ? [] : [`  name:    ${created.name}`]),
        `  team:    ${created.team}`,
        `  scopes:  ${created.scopes.join(", ")}`,
        `  expires: ${created.expiresAt ?? "never"}`,
        `  file:    ${displayPath(created.file)}`
      ].join("\n")
    )
  })
).pipe(Command.withDescription("Create an API key and print it once"))

const list = Command.make(
  "list",
  {
    ...directoryFlags,
    json: Flag.Boolean("json").pipe(
      Flag.withDescription("Print the records as JSON (hashes included)"),
      Flag.withDefault(false)
    )
  },
  Effect.fn("keys.list")(function* ({ config, data, json }) {
    const dirs = yield* directories(config, data)
    const keys = yield* withKeys(dirs, (keys) => keys.list)
    const now = Date.now()
    if (json) {
      const records = keys.map(({ record, file }) => ({
        id: record.id,
        name: record.name ?? null,
        team: record.team,
        scopes: record.scopes,
        hash: record.hash,
        createdAt: record.createdAt,
        expiresAt: record.expiresAt ?? null,
        revokedAt: record.revokedAt ?? null,
        status: keyStatus(record, now),
        file: displayPath(file)
      }))
      yield* Console.log(JSON.stringify(records, null, 2))
      return
    }
    if (keys.length === 0) {
      yield* Console.log(
        `No API keys (looked in ${displayPath(resolve(dirs.configDir))} and ${displayPath(resolve(dirs.dataDir))}).`
      )
      return
    }
    const header = ["ID", "NAME", "TEAM", "SCOPES", "CREATED", "EXPIRES", "STATUS", "FILE"]
    const rows = keys.map(({ record, file }) => [
      record.id,
      record.name ?? "-",
      record.team,
      record.scopes.join(","),
      record.createdAt,
      record.expiresAt ?? "never",
      keyStatus(record, now),
      displayPath(file)
    ])
    yield* Console.log(table([header, ...rows]))
  })
).pipe(Command.withDescription("List API keys (id, team, scopes, status, file; never the keys themselves)"))

const revoke = Command.make(
  "revoke",
  {
    ...directoryFlags,
    id: Argument.String("id").pipe(Argument.withDescription("The key id, e.g. key_abcdefgh2345"))
  },
  Effect.fn("keys.revoke")(function* ({ config, data, id }) {
    const dirs = yield* directories(config, data)
    const revoked = yield* withKeys(dirs, (keys) => keys.revoke(id))
    yield* Console.log(`Revoked ${revoked.id} at ${revoked.revokedAt} (${revoked.files.map(displayPath).join(", ")}).`)
  })
).pipe(Command.withDescription("Revoke an API key: the daemon rejects it from then on"))

const rotateSigning = Command.make(
  "rotate-signing",
  { ...directoryFlags },
  Effect.fn("keys.rotateSigning")(function* ({ config, data }) {
    const loaded = loadDirectory({ configDir: config, dataDir: Option.getOrUndefined(data) })
    if (!loaded.ok)
      return yield* userError(`The configuration is not valid:\n${loaded.problems.map(formatProblem).join("\n")}`)
    const dataDir = loaded.config.dataDir!
    const keys = yield* Effect.scoped(
      Effect.flatMap(
        openStore({ configDir: config, dataDir }, SigningKeyStore, (stores) => stores.signingKeys),
        ({ store }) => rotateSigningKeys(store, loaded.config, Date.now(), true)
      )
    ).pipe(Effect.mapError((error) => userError((error as Error).message, error)))
    const signing = activeKey(keys)!
    yield* Console.log(
      JSON.stringify({
        signingKey: signing.kid,
        algorithm: signing.algorithm,
        published: keys.map((key) => ({
          kid: key.kid,
          ...(key.publishUntil === undefined ? {} : { publishedUntil: new Date(key.publishUntil).toISOString() })
        }))
      })
    )
  })
).pipe(
  Command.withDescription(
    "Make a new key for signing eligibility tokens; the old one stays published until its tokens expire"
  )
)

export const keysCommand = Command.make("keys").pipe(
  Command.withDescription("Create, list and revoke API keys (stored as hashes in api-keys.yaml)"),
  Command.withSubcommands([create, list, revoke, rotateSigning])
)
