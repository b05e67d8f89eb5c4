/**
 * The Promise client against a running daemon, as any TypeScript or
 * JavaScript app uses it (no Effect): validate one email, stream a CSV job
 * whose rows keep their customer ids, wait for it with progress, read every
 * result, and page through the team's offers. Start a daemon first
 * (`npm start` in a checkout prints its URL and, on the first start, a key):
 *
 *   CAMPUSGATE_URL=http://localhost:8080 CAMPUSGATE_API_KEY=cgk_... node examples/promise-client.ts
 *
 * Prints one JSON line per step; a problem the daemon answers is printed
 * with its code and request id, and exits 1.
 */
import { CampusgateClientError, createCampusgateClient, isProblem } from "campusgate/client"

const baseUrl = process.env.CAMPUSGATE_URL
const apiKey = process.env.CAMPUSGATE_API_KEY
if (baseUrl === undefined || apiKey === undefined) {
  console.error("Set CAMPUSGATE_URL (e.g. http://localhost:8080) and CAMPUSGATE_API_KEY.")
  process.exit(2)
}
const targetGroupId = process.argv[2] ?? "uk-students"

const campusgate = createCampusgateClient({ baseUrl, apiKey })

/** A CSV produced row by row, as an export from another system would be: it is sent while it is made. */
async function* customers() {
  yield "customerId;email\n"
  for (const [id, email] of [
    ["c-41", "jane@ox.ac.uk"],
    ["c-42", "bob@mit.edu"],
    ["c-43", "Jane+shop@OX.ac.uk"]
  ]) {
    yield `${id};${email}\n`
  }
}

try {
  const one = await campusgate.validation.targetGroup({ email: "jane@ox.ac.uk", targetGroupId })
  console.log(JSON.stringify({ step: "validate", isValid: one.isValid, reasonCode: one.reasonCode ?? null }))

  const accepted = await campusgate.jobs.submitStream({ format: "csv", body: customers(), targetGroupId })
  const job = await campusgate.jobs.waitForJob(accepted.jobId, {
    onProgress: (current) => console.error(`job ${current.jobId}: ${current.status} ${current.progress.percent}%`)
  })
  console.log(JSON.stringify({ step: "job", status: job.status, counts: job.counts }))
  for await (const row of campusgate.jobs.results(job.jobId)) {
    console.log(
      JSON.stringify({
        step: "row",
        customerId: row.columns?.customerId,
        isValid: row.isValid,
        duplicateOf: row.duplicateOf ?? null
      })
    )
  }

  let offers = 0
  for await (const _offer of campusgate.offers.all()) offers++
  console.log(JSON.stringify({ step: "offers", count: offers }))
} catch (error) {
  if (isProblem(error)) {
    console.error(JSON.stringify({ code: error.code, detail: error.detail, requestId: error.requestId }))
  } else if (error instanceof CampusgateClientError) {
    console.error(JSON.stringify({ error: error.message }))
  } else throw error
  process.exitCode = 1
}
