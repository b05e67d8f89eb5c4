/**
 * `campusgate review list|approve|reject|export`: the institution review
 * queue from the command line, over the deployment's review store (the data
 * directory's files, or Redis) and the configuration as the daemon loads
 * it, through the same `Reviews` service as the API. `approve` writes the
 * reviewed dataset (`datasets/reviewed.yaml`, else the data directory's
 * `reviewed.yaml`), which a running daemon's watcher picks up; with Redis
 * every daemon reloads within a second. `export` prints the reviewed
 * dataset's YAML to commit.
 */
import * as Console from "effect/Console"
import * as Argument from "effect/cli/Argument"
import * as CliError from "effect/cli/CliError"
import * as Command from "effect/cli/Command"
import * as Flag from "effect/cli/Flag"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { ApproveRequest, RejectRequest, ReviewSort } from "../../api/institutionReviews.ts"
import { Reviews, type ReviewsService } from "../../app/Reviews.ts"
import { Snapshot } from "../../app/Snapshot.ts"
import { directorySource } from "../../app/sources.ts"
import { isSharedKind, openStore } from "../../deployment/stores.ts"
import { ReviewStatus } from "../../domain/InstitutionReview.ts"
import { ReviewQueue } from "../../reviews/ReviewQueue.ts"
import { ReviewStore } from "../../reviews/ReviewStore.ts"
import { dataDirectory } from "../directories.ts"
import { directoryFlags } from "../options.ts"
import { table } from "../table.ts"

const userError = (message: string, cause?: unknown) =>
  new CliError.UserError({ cause: cause ?? new Error(message), userMessage: message })

/** Runs `use` with the `Reviews` service over the deployment of `config` (and `--data`). */
const withReviews = <A>(
  config: string,
  data: Option.Option<string>,
  use: (reviews: ReviewsService) => Effect.Effect<A, unknown>
) =>
  Effect.scoped(
    Effect.gen(function* () {
      const dataDir = dataDirectory(config, data)
      const { store, kind } = yield* openStore({ configDir: config, dataDir }, ReviewStore, (stores) => stores.reviews)
      const source = directorySource({ configDir: config, dataDir }, { reviews: store })
      const layer = Reviews.layer(isSharedKind(kind) ? "config-only" : "config-or-data").pipe(
        Layer.provide(Snapshot.layerFrom(source)),
        Layer.provide(Layer.succeed(ReviewQueue, ReviewQueue.none)),
        Layer.provide(Layer.succeed(ReviewStore, store))
      )
      return yield* Effect.flatMap(Effect.provide(Effect.service(Reviews), layer), use)
    })
  ).pipe(Effect.mapError((error) => userError(String((error as Error)?.message ?? error), error)))

const team = Flag.String("team").pipe(Flag.withDescription("The team whose queue it is (a team id)"))

const decode = <S extends Schema.Top>(schema: S, value: unknown, what: string) =>
  Effect.mapError(Schema.decodeUnknownEffect(schema as never)(value) as Effect.Effect<S["Type"], Error>, (error) =>
    userError(`${what}: ${error.message}`, error)
  )

const list = Command.make(
  "list",
  {
    ...directoryFlags,
    team,
    status: Flag.String("status").pipe(Flag.withDescription("pending (default), approved or rejected"), Flag.optional),
    sort: Flag.String("sort").pipe(Flag.withDescription("count (default), score or recent"), Flag.optional),
    limit: Flag.Int("limit").pipe(Flag.withDescription("How many (default 50, at most 100)"), Flag.optional),
    json: Flag.Boolean("json").pipe(Flag.withDescription("Print the page as JSON"), Flag.withDefault(false))
  },
  Effect.fn("review.list")(function* ({ config, data, team, status, sort, limit, json }) {
    const query = {
      ...(Option.isSome(status) ? { status: yield* decode(ReviewStatus, status.value, "--status") } : {}),
      ...(Option.isSome(sort) ? { sort: yield* decode(ReviewSort, sort.value, "--sort") } : {}),
      ...(Option.isSome(limit) ? { limit: Math.min(100, Math.max(1, limit.value)) } : {})
    }
    const page = yield* withReviews(config, data, (reviews) => reviews.list(team, query))
    if (json) {
      yield* Console.log(JSON.stringify(page, null, 2))
      return
    }
    if (page.data.length === 0) {
      yield* Console.log(
        `No ${query.status ?? "pending"} domains in team "${team}"'s queue (dropped: ${page.dropped}).`
      )
      return
    }
    const header = ["DOMAIN", "STATUS", "COUNT", "ACCEPTED", "SCORE", "LAST SEEN", "NEAREST"]
    const rows = page.data.map((review) => [
      review.domain,
      review.status,
      String(review.count),
      String(review.accepted),
      review.candidate.score.toFixed(2),
      review.lastSeen.slice(0, 19),
      review.nearest[0] === undefined ? "-" : `${review.nearest[0].name ?? review.nearest[0].domain}`
    ])
    yield* Console.log(table([header, ...rows]))
    if (page.dropped > 0) yield* Console.log(`(${page.dropped} domains dropped to keep the queue bounded)`)
  })
).pipe(Command.withDescription("List a team's unknown domains, most met first"))

/** The key id the command line decides as. */
const CLI_REVIEWER = "cli"

const approve = Command.make(
  "approve",
  {
    ...directoryFlags,
    domain: Argument.String("domain").pipe(Argument.withDescription("The domain, e.g. hfmt-hamburg.de")),
    team,
    name: Flag.String("name").pipe(Flag.withDescription("The institution's name")),
    type: Flag.String("type").pipe(Flag.withDescription("university, college, school, ...")),
    country: Flag.String("country").pipe(Flag.withDescription("ISO 3166-1 alpha-2, e.g. DE")),
    region: Flag.String("region").pipe(Flag.withDescription("ISO 3166-2, e.g. DE-HH"), Flag.optional),
    role: Flag.String("role").pipe(Flag.withDescription("student, staff or alumni, when it serves one"), Flag.optional)
  },
  Effect.fn("review.approve")(function* ({ config, data, domain, team, name, type, country, region, role }) {
    const request = yield* decode(
      ApproveRequest,
      {
        name,
        type,
        country,
        ...(Option.isSome(region) ? { region: region.value } : {}),
        ...(Option.isSome(role) ? { role: role.value } : {})
      },
      "approve"
    )
    const review = yield* withReviews(config, data, (reviews) =>
      reviews.approve({ team, keyId: CLI_REVIEWER }, domain, request)
    )
    yield* Console.log(`Approved ${review.domain} for team "${team}" as ${request.name} (${request.type}).`)
  })
).pipe(Command.withDescription("Approve a domain as an institution of the team's (written to the reviewed dataset)"))

const reject = Command.make(
  "reject",
  {
    ...directoryFlags,
    domain: Argument.String("domain").pipe(Argument.withDescription("The domain, e.g. example-shop.de")),
    team,
    reason: Flag.String("reason").pipe(Flag.withDescription("Why it is not an institution"))
  },
  Effect.fn("review.reject")(function* ({ config, data, domain, team, reason }) {
    const request = yield* decode(RejectRequest, { reason }, "reject")
    const review = yield* withReviews(config, data, (reviews) =>
      reviews.reject({ team, keyId: CLI_REVIEWER }, domain, request)
    )
    yield* Console.log(`Rejected ${review.domain} for team "${team}": ${request.reason}`)
  })
).pipe(Command.withDescription("Reject a domain, with the reason (an approval made before ends)"))

const exportCommand = Command.make(
  "export",
  {
    ...directoryFlags,
    team: Flag.String("team").pipe(Flag.withDescription("Only this team's approvals"), Flag.optional)
  },
  Effect.fn("review.export")(function* ({ config, data, team }) {
    const yaml = yield* withReviews(config, data, (reviews) => reviews.exportYaml(Option.getOrUndefined(team)))
    yield* Console.log(yaml.trimEnd())
  })
).pipe(Command.withDescription("Print the reviewed dataset (YAML) to commit as datasets/reviewed.yaml"))

export const reviewCommand = Command.make("review").pipe(
  Command.withDescription("The institution review queue: list unknown domains, approve or reject them, export"),
  Command.withSubcommands([list, approve, reject, exportCommand])
)
