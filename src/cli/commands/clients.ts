/**
 * `campusgate clients secret [--json]`: makes a confidential OpenID Connect
 * client's secret and prints it with its hash. The secret goes to the
 * client's backend (shown only this once); the hash goes into the client's
 * `secretHashes` in `clients/<id>.yaml` — beside the old one while the
 * backend changes over, so a rotation breaks no sign-in.
 */
import * as Console from "effect/Console"
import * as Command from "effect/cli/Command"
import * as Flag from "effect/cli/Flag"
import * as Effect from "effect/Effect"
import { generateClientSecret, hashClientSecret } from "../../oidc/clientSecrets.ts"

const secret = Command.make(
  "secret",
  {
    json: Flag.Boolean("json").pipe(Flag.withDescription('Print {"secret","hash"} as JSON'), Flag.withDefault(false))
  },
  Effect.fn("clients secret")(function* ({ json }) {
    const made = generateClientSecret()
    const hash = hashClientSecret(made)
    if (json) return yield* Console.log(JSON.stringify({ secret: made, hash }))
    yield* Console.log(
      `Secret (give it to the client's backend; it is shown only this once):\n  ${made}\n` +
        `Hash (add it to secretHashes in clients/<id>.yaml):\n  ${hash}`
    )
  })
).pipe(Command.withDescription("Make a confidential client's secret and print it with the hash its YAML lists"))

export const clientsCommand = Command.make("clients").pipe(
  Command.withDescription("OpenID Connect clients (clients/*.yaml)"),
  Command.withSubcommands([secret])
)
