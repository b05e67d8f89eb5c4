/**
 * The Jobs screen: the team's jobs, newest first, a page at a time ("Load
 * more jobs" appends the next; `?limit=N` in the address sets the page
 * size, as the API's `limit` does), with live progress bars (the pages
 * shown are read again every second while a job is queued or running),
 * counts, duration, result downloads (CSV, NDJSON) and cancel; and a form
 * that uploads a CSV or NDJSON file as a new job against an offer or a
 * target group (`POST /validate/bulk-async`, the file as the body).
 */
import { useEffect, useLayoutEffect, useRef, useState } from "preact/hooks"
import { listAll } from "../api.ts"
import type { Job, JobStarted, Offer, TargetGroup } from "../apiTypes.ts"
import { Badge, ErrorNote, Show } from "../components/common.tsx"
import { useScope, useSigned } from "../context.ts"
import { formatCount, formatDuration, formatInstant } from "../data/format.ts"
import { pageSizeOf } from "../data/jobPages.ts"
import {
  jobFinished,
  jobSeconds,
  type ResultFormat,
  resultsFileName,
  resultsUrl,
  submitUrl,
  uploadType
} from "../data/jobs.ts"
import { useInterval, useLoad } from "../hooks.ts"
import { useJobPages } from "./useJobPages.ts"

const POLL_MS = 1000

const targetOf = (job: Job): string =>
  "offerId" in job.target ? `offer ${job.target.offerId}` : `target group ${job.target.targetGroupId}`

const Upload = (props: { readonly onStarted: (job: JobStarted) => void }) => {
  const { api } = useSigned()
  const file = useRef<HTMLInputElement>(null)
  const [targets] = useLoad(async () => {
    const [offers, groups] = await Promise.all([
      listAll<Offer>(api, "/api/v1/offers"),
      listAll<TargetGroup>(api, "/api/v1/target-groups")
    ])
    return { offers, groups }
  }, "job-targets")
  const [target, setTarget] = useState("")
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<string | Error | undefined>(undefined)
  const [started, setStarted] = useState<string | undefined>(undefined)

  useEffect(() => {
    if (targets.state === "ready" && target === "") {
      const first = targets.value.offers[0]?.id ?? targets.value.groups[0]?.id
      const kind = targets.value.offers[0] === undefined ? "targetGroupId" : "offerId"
      if (first !== undefined) setTarget(`${kind}:${first}`)
    }
  }, [targets, target])

  const submit = async (event: Event) => {
    event.preventDefault()
    setError(undefined)
    setStarted(undefined)
    const picked = file.current?.files?.[0]
    if (picked === undefined) return setError("Choose a CSV or NDJSON file.")
    const contentType = uploadType(picked)
    if (contentType === undefined) return setError("The file must be CSV (.csv) or NDJSON (.ndjson, .jsonl).")
    const separator = target.indexOf(":")
    const kind = target.slice(0, separator) as "offerId" | "targetGroupId"
    setBusy(true)
    try {
      const job = await api.request<JobStarted>(submitUrl({ kind, id: target.slice(separator + 1) }), {
        method: "POST",
        body: picked,
        contentType
      })
      setStarted(`Started ${job.jobId} from ${picked.name}.`)
      if (file.current !== null) file.current.value = ""
      props.onStarted(job)
    } catch (failure) {
      setError(failure as Error)
    } finally {
      setBusy(false)
    }
  }

  return (
    <section aria-labelledby="upload-heading" class="panel">
      <h2 id="upload-heading">Start a job</h2>
      <Show loaded={targets} what="the offers and target groups">
        {({ offers, groups }) => (
          <form class="toolbar" onSubmit={submit}>
            <div class="field grow">
              <label for="job-file">CSV or NDJSON file</label>
              <input id="job-file" ref={file} type="file" accept=".csv,.ndjson,.jsonl,text/csv,application/x-ndjson" />
            </div>
            <div class="field">
              <label for="job-target">Validate against</label>
              <select id="job-target" value={target} onChange={(event) => setTarget(event.currentTarget.value)}>
                {offers.length === 0 ? null : (
                  <optgroup label="Offers">
                    {offers.map((offer) => (
                      <option key={offer.id} value={`offerId:${offer.id}`}>
                        {offer.name}
                      </option>
                    ))}
                  </optgroup>
                )}
                <optgroup label="Target groups">
                  {groups.map((group) => (
                    <option key={group.id} value={`targetGroupId:${group.id}`}>
                      {group.name}
                    </option>
                  ))}
                </optgroup>
              </select>
            </div>
            <button type="submit" class="primary" disabled={busy || target === ""}>
              {busy ? "Uploading…" : "Start job"}
            </button>
          </form>
        )}
      </Show>
      <div aria-live="polite">
        {started === undefined ? null : (
          <p class="note" role="status">
            {started}
          </p>
        )}
        {error === undefined ? null : typeof error === "string" ? (
          <p class="note note-error" role="alert">
            {error}
          </p>
        ) : (
          <ErrorNote error={error} what="The job was refused" />
        )}
      </div>
    </section>
  )
}

const Download = (props: { readonly job: Job; readonly format: ResultFormat }) => (
  <a href={resultsUrl(props.job.jobId, props.format)} download={resultsFileName(props.job.jobId, props.format)}>
    {props.format.toUpperCase()}
    <span class="visually-hidden"> results of {props.job.jobId}</span>
  </a>
)

const JobRow = (props: { readonly job: Job; readonly mayCancel: boolean; readonly onCancel: (job: Job) => void }) => {
  const { job } = props
  const seconds = jobSeconds(job, Date.now())
  return (
    <tr data-job={job.jobId} data-status={job.status}>
      <td>
        <span class="mono" tabIndex={-1} data-job-id>
          {job.jobId}
        </span>
        <div class="muted">{targetOf(job)}</div>
        <div class="muted">{formatInstant(job.createdAt)}</div>
      </td>
      <td>
        <Badge status={job.status} />
        {job.error === undefined ? null : <div class="muted">{job.error}</div>}
      </td>
      <td class="progress-cell">
        <progress
          max={100}
          value={job.progress.percent}
          aria-label={`Progress of ${job.jobId}`}
          aria-valuetext={`${job.progress.percent}%`}
        />
        <div class="muted">
          {formatCount(job.progress.processed)} of {formatCount(job.progress.total)} ({job.progress.percent}%)
        </div>
      </td>
      <td>
        <span data-count="valid">{formatCount(job.counts.valid)}</span> valid,{" "}
        <span data-count="invalid">{formatCount(job.counts.invalid)}</span> invalid
        <div class="muted">
          {formatCount(job.counts.duplicates)} duplicates, {formatCount(job.counts.badInput)} not emails
        </div>
      </td>
      <td>{seconds === undefined ? "—" : formatDuration(seconds)}</td>
      <td class="row-actions">
        {job.status === "completed" ? (
          <>
            <Download job={job} format="csv" /> <Download job={job} format="ndjson" />
          </>
        ) : null}
        {props.mayCancel && !jobFinished(job) ? (
          <button type="button" onClick={() => props.onCancel(job)}>
            Cancel<span class="visually-hidden"> {job.jobId}</span>
          </button>
        ) : null}
      </td>
    </tr>
  )
}

/** The count shown and the way to the next page; focus moves to the first job of a page once it is read. */
const MoreJobs = (props: {
  readonly shown: number
  readonly hasMore: boolean
  readonly more: "idle" | "loading" | Error
  readonly onMore: () => void
}) => (
  <div class="actions">
    <p class="muted" aria-live="polite" data-shown={props.shown}>
      {props.hasMore
        ? `Showing the newest ${props.shown === 1 ? "job" : `${formatCount(props.shown)} jobs`}.`
        : `All ${formatCount(props.shown)} ${props.shown === 1 ? "job" : "jobs"} shown.`}
    </p>
    {props.hasMore ? (
      <button type="button" onClick={props.onMore} disabled={props.more === "loading"}>
        {props.more === "loading" ? "Loading…" : "Load more jobs"}
      </button>
    ) : null}
    {props.more instanceof Error ? <ErrorNote error={props.more} what="Could not load more jobs" /> : null}
  </div>
)

export const Jobs = () => {
  const { api } = useSigned()
  const maySubmit = useScope("validate:bulk")
  const [limit] = useState(() => pageSizeOf(location.search))
  const { loaded, more, refresh, loadMore, busy } = useJobPages(api, limit)
  const [error, setError] = useState<Error | undefined>(undefined)
  const firstOfPage = useRef<number | undefined>(undefined)
  const running = loaded.state === "ready" && loaded.value.jobs.some((job) => !jobFinished(job))
  useInterval(
    () => {
      if (!busy()) void refresh()
    },
    POLL_MS,
    running
  )

  useEffect(() => {
    document.title = "Jobs · Campusgate console"
  }, [])

  // A layout effect: the focus moves in the same task that adds the page's rows (and removes
  // the focused "Load more jobs" button), so no moment shows the rows with the focus on <body>.
  useLayoutEffect(() => {
    const index = firstOfPage.current
    if (loaded.state !== "ready" || index === undefined) return
    const job = loaded.value.jobs[index]
    if (job === undefined) return
    firstOfPage.current = undefined
    document.querySelector<HTMLElement>(`tr[data-job="${job.jobId}"] [data-job-id]`)?.focus()
  }, [loaded])

  const showMore = () => {
    if (loaded.state === "ready") firstOfPage.current = loaded.value.jobs.length
    void loadMore()
  }

  const cancel = async (job: Job) => {
    setError(undefined)
    try {
      await api.request(`/api/v1/jobs/${encodeURIComponent(job.jobId)}`, { method: "DELETE" })
    } catch (failure) {
      setError(failure as Error)
    }
    await refresh()
  }

  return (
    <>
      <h1 tabIndex={-1}>Jobs</h1>
      {maySubmit ? <Upload onStarted={() => void refresh()} /> : null}
      {error === undefined ? null : <ErrorNote error={error} what="Could not cancel" />}
      <Show loaded={loaded} what="the jobs">
        {(list) =>
          list.jobs.length === 0 ? (
            <p class="note">No jobs yet.</p>
          ) : (
            <>
              <div class="table-scroll">
                <table class="jobs">
                  <caption class="visually-hidden">Jobs of your team, newest first</caption>
                  <thead>
                    <tr>
                      <th scope="col">Job</th>
                      <th scope="col">Status</th>
                      <th scope="col">Progress</th>
                      <th scope="col">Counts</th>
                      <th scope="col">Duration</th>
                      <th scope="col">Results</th>
                    </tr>
                  </thead>
                  <tbody>
                    {list.jobs.map((job) => (
                      <JobRow key={job.jobId} job={job} mayCancel={maySubmit} onCancel={cancel} />
                    ))}
                  </tbody>
                </table>
              </div>
              <MoreJobs shown={list.jobs.length} hasMore={list.nextCursor !== null} more={more} onMore={showMore} />
            </>
          )
        }
      </Show>
    </>
  )
}
