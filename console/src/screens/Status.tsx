/**
 * The Status screen: the daemon's version and uptime, the configuration in
 * force (generation, when it loaded, reloads), the problems of a rejected
 * change with file:line:column, the rate-limit policy, and warnings for
 * the team's API keys that expire soon.
 */
import { useEffect } from "preact/hooks"
import { problemWhere } from "../../../src/domain/problemText.ts"
import type { Status as DaemonStatus } from "../apiTypes.ts"
import { Badge, Show } from "../components/common.tsx"
import { useSigned } from "../context.ts"
import { expiryText, formatCount, formatDuration, formatInstant } from "../data/format.ts"
import { useLoad } from "../hooks.ts"

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
  <>
    <div class="table-scroll">
      <table>
        <caption class="visually-hidden">Rate limits</caption>
        <thead>
          <tr>
            <th scope="col">Budget</th>
            <th scope="col">Requests</th>
            <th scope="col">Per</th>
          </tr>
        </thead>
        <tbody>
          {BUDGETS.map(([bucket, what]) => (
            <tr key={bucket} data-bucket={bucket}>
              <th scope="row">
                {bucket} <span class="muted">({what})</span>
              </th>
              <td>{formatCount(props.limits[bucket].requests)}</td>
              <td>{formatDuration(props.limits[bucket].windowSeconds)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  </>
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
          <div>
            <dt>Version</dt>
            <dd data-fact="version">{status.version}</dd>
          </div>
          <div>
            <dt>Uptime</dt>
            <dd data-fact="uptime">{formatDuration(status.uptimeSeconds)}</dd>
          </div>
          <div>
            <dt>Started</dt>
            <dd>{formatInstant(status.startedAt)}</dd>
          </div>
        </dl>
      </section>
      <section aria-labelledby="config-heading">
        <h2 id="config-heading">Configuration</h2>
        <dl class="facts">
          <div>
            <dt>Generation</dt>
            <dd data-fact="generation">{config.generation}</dd>
          </div>
          <div>
            <dt>Loaded</dt>
            <dd>{formatInstant(config.loadedAt)}</dd>
          </div>
          <div>
            <dt>Last reload attempt</dt>
            <dd>{formatInstant(config.lastAttemptAt)}</dd>
          </div>
          <div>
            <dt>Reloads</dt>
            <dd>
              {config.reloads.applied} applied, {config.reloads.rejected} rejected
            </dd>
          </div>
          <div>
            <dt>State</dt>
            <dd>
              {config.stale ? (
                <>
                  <Badge status="stale" /> the last change was rejected; generation {config.generation} keeps serving
                </>
              ) : (
                <Badge status="current" />
              )}
            </dd>
          </div>
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

  useEffect(() => {
    document.title = "Status · Campusgate console"
  }, [])

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
