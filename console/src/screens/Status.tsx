/**
 * The Status screen: the daemon's version and uptime, the configuration in
 * force (generation, when it loaded, reloads), the problems of a rejected
 * change with file:line:column, the rate-limit policy, and warnings for
 * the team's API keys that expire soon.
 */
import { problemWhere } from "../../../src/domain/problemText.ts"
import type { Status as DaemonStatus } from "../apiTypes.ts"
import { Badge, Fact, Show, Table } from "../components/common.tsx"
import { useSigned } from "../context.ts"
import { expiryText, formatCount, formatDuration, formatInstant } from "../data/format.ts"
import { useLoad, useTitle } from "../hooks.ts"

type RateLimits = DaemonStatus["rateLimits"]

/** The budgets in the order an operator reads them, with what each covers. */
const BUDGETS: ReadonlyArray<readonly [Exclude<keyof RateLimits, "whenStoreDown">, string]> = [
  ["validate", "single validations, per key"],
  ["bulk", "bulk validation and batch processing, per key"],
  ["jobs", "job submissions, per key"],
  ["verifications", "verifications, per key"],
  ["default", "everything else, per key"],
  ["signIn", "console sign-ins, per client address"]
]

const RateLimitTable = (props: { readonly limits: RateLimits }) => (
  <Table caption="Rate limits" columns={["Budget", "Requests", "Per"]}>
    {BUDGETS.map(([bucket, what]) => (
      <tr key={bucket} data-bucket={bucket}>
        <th scope="row">
          {bucket} <span class="muted">({what})</span>
        </th>
        <td>{formatCount(props.limits[bucket].requests)}</td>
        <td>{formatDuration(props.limits[bucket].windowSeconds)}</td>
      </tr>
    ))}
  </Table>
)

const StatusView = (props: { readonly status: DaemonStatus }) => {
  const { status } = props
  const config = status.config
  const now = Date.now()
  const expiring = status.keys
  return (
    <>
      {expiring.length === 0 ? null : (
        <section aria-labelledby="keys-heading" class="panel warning">
          <h2 id="keys-heading">API keys expiring soon</h2>
          <ul>
            {expiring.map((key) => {
              return (
                <li key={key.id} data-key={key.id}>
                  <span class="mono">{key.id}</span>
                  {key.name === undefined ? "" : ` (${key.name})`} {expiryText(key.expiresAt, now)} (
                  {formatInstant(key.expiresAt)})
                </li>
              )
            })}
          </ul>
        </section>
      )}
      <section aria-labelledby="daemon-heading">
        <h2 id="daemon-heading">Daemon</h2>
        <dl class="facts">
          <Fact term="Version" fact="version">
            {status.version}
          </Fact>
          <Fact term="Uptime" fact="uptime">
            {formatDuration(status.uptimeSeconds)}
          </Fact>
          <Fact term="Started">{formatInstant(status.startedAt)}</Fact>
        </dl>
      </section>
      <section aria-labelledby="config-heading">
        <h2 id="config-heading">Configuration</h2>
        <dl class="facts">
          <Fact term="Generation" fact="generation">
            {config.generation}
          </Fact>
          <Fact term="Loaded">{formatInstant(config.loadedAt)}</Fact>
          <Fact term="Last reload attempt">{formatInstant(config.lastAttemptAt)}</Fact>
          <Fact term="Reloads">
            {config.reloads.applied} applied, {config.reloads.rejected} rejected
          </Fact>
          <Fact term="State">
            {config.stale ? (
              <>
                <Badge status="stale" /> the last change was rejected; generation {config.generation} keeps serving
              </>
            ) : (
              <Badge status="current" />
            )}
          </Fact>
        </dl>
        {config.problems.length === 0 ? (
          <p class="note">No problems.</p>
        ) : (
          <>
            <h3>Problems of the rejected change</h3>
            <ul class="problems">
              {config.problems.map((problem, index) => (
                <li key={index}>
                  <span class="mono">{problemWhere(problem) || "(no file)"}</span>{" "}
                  <span class="mono muted">{problem.path}</span> {problem.message}
                </li>
              ))}
            </ul>
          </>
        )}
      </section>
      <section aria-labelledby="limits-heading">
        <h2 id="limits-heading">Rate limits</h2>
        <RateLimitTable limits={status.rateLimits} />
      </section>
    </>
  )
}

export const Status = () => {
  const { api } = useSigned()
  const [loaded, reload] = useLoad(() => api.request<DaemonStatus>("/api/v1/status"), "status")

  useTitle("Status")

  return (
    <>
      <div class="section-head">
        <h1 tabIndex={-1}>Status</h1>
        <button type="button" onClick={() => void reload()}>
          Refresh
        </button>
      </div>
      <Show loaded={loaded} what="the status">
        {(status) => <StatusView status={status} />}
      </Show>
    </>
  )
}
