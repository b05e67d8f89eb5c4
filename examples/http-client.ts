/**
 * The typed HTTP client against a running daemon: validates one email
 * against a target group and prints the result as JSON. Starts nothing
 * itself; point it at a daemon (`npm start` in a checkout prints its URL and,
 * on the first start, an API key):
 *
 *   CAMPUSGATE_URL=http://localhost:8080 CAMPUSGATE_API_KEY=cg_... \
 *     node examples/http-client.ts [email] [targetGroupId]
 *
 * A problem the API answers is a typed failure: here an unknown target group
 * (`NotFound`) and a malformed email (`BadRequest`) are printed and exit 1.
 */

import { makeCampusgateClient } from "campusgate/client"
import * as Effect from "effect/Effect"

const baseUrl = process.env.CAMPUSGATE_URL
const apiKey = process.env.CAMPUSGATE_API_KEY
if (baseUrl === undefined || apiKey === undefined) {
  console.error("Set CAMPUSGATE_URL (e.g. http://localhost:8080) and CAMPUSGATE_API_KEY.")
  process.exit(2)
}
const [email = "jane@ox.ac.uk", targetGroupId = "uk-students"] = process.argv.slice(2)

const program = Effect.gen(function* () {
  const client = yield* makeCampusgateClient({ baseUrl, apiKey })
  const result = yield* client.validation.targetGroup({ payload: { email, targetGroupId } })
  console.log(JSON.stringify(result))
}).pipe(
  Effect.catchTags({
    NotFound: (problem) => Effect.sync(() => fail(problem)),
    BadRequest: (problem) => Effect.sync(() => fail(problem))
  })
)

function fail(problem: { readonly code: string; readonly detail: string; readonly requestId: string }): void {
  console.error(JSON.stringify({ code: problem.code, detail: problem.detail, requestId: problem.requestId }))
  process.exitCode = 1
}

await Effect.runPromise(program)
