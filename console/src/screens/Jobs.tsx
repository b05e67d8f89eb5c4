/**
 * The Jobs screen: the team's jobs, newest first, a page at a time ("Load
 * more jobs" appends the next; `?limit=N` in the address sets the page
 * size, as the API's `limit` does), with live progress bars (the pages
 * shown are read again every second while a job is queued or running),
 * counts, duration, result downloads (CSV, NDJSON) and cancel; and a form
 * that uploads a CSV or NDJSON file as a new job against an offer or a
 * target group (`POST /validate/bulk-async`, the file as the body).
 */
import { useEffect, useRef, useState } from "preact/hooks"
import { listAll } from "../api.ts"
import type { Job, JobStarted, Offer, TargetGroup } from "../apiTypes.ts"
import { Badge, ErrorNote, MorePages, Options, Show, Table } from "../components/common.tsx"
import { useScope, useSigned } from "../context.ts"
import { formatCount, formatDuration, formatInstant } from "../data/format.ts"
import { type JobPages, pageSizeOf } from "../data/jobPages.ts"
import {
  jobFinished,
  jobSeconds,
  type ResultFormat,
  resultsFileName,
  resultsUrl,
  submitUrl,
  uploadType
} from "../data/jobs.ts"
import { useInterval, useLoad, useShowMore, useTitle, useWrite } from "../hooks.ts"
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
  const { busy, error, setError, run } = useWrite()
  /** Why no file was sent (none chosen, or not CSV nor NDJSON). */
  const [invalid, setInvalid] = useState<string | undefined>(undefined)
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
    setInvalid(undefined)
    setStarted(undefined)
    const picked = file.current?.files?.[0]
    if (picked === undefined) return setInvalid("Choose a CSV or NDJSON file.")
    const contentType = uploadType(picked)
    if (contentType === undefined) return setInvalid("The file must be CSV (.csv) or NDJSON (.ndjson, .jsonl).")
    const separator = target.indexOf(":")
    const kind = target.slice(0, separator) as "offerId" | "targetGroupId"
    await run(async () => {
      const job = await api.request<JobStarted>(submitUrl({ kind, id: target.slice(separator + 1) }), {
        method: "POST",
        body: picked,
        contentType
      })
      setStarted(`Started ${job.jobId} from ${picked.name}.`)
      if (file.current !== null) file.current.value = ""
      props.onStarted(job)
    })
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
                    <Options choices={offers.map((offer) => [`offerId:${offer.id}`, offer.name])} />
                  </optgroup>
                )}
                <optgroup label="Target groups">
                  <Options choices={groups.map((group) => [`targetGroupId:${group.id}`, group.name])} />
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
        {invalid === undefined ? null : <ErrorNote error={invalid} />}
        {error === undefined ? null : <ErrorNote error={error} what="The job was refused" />}
      </div>
    </section>
  )
}

/** How many jobs are shown, and whether that is all of them. */
const shownWords = (list: JobPages): string => {
  const count = list.jobs.length
  return list.nextCursor !== null
    ? `Showing the newest ${count === 1 ? "job" : `${formatCount(count)} jobs`}.`
    : `All ${formatCount(count)} ${count === 1 ? "job" : "jobs"} shown.`
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

export const Jobs = () => {
  const { api } = useSigned()
  const maySubmit = useScope("validate:bulk")
  const [limit] = useState(() => pageSizeOf(location.search))
  const { loaded, more, refresh, loadMore, busy } = useJobPages(api, limit)
  const cancelling = useWrite()
  const running = loaded.state === "ready" && loaded.value.jobs.some((job) => !jobFinished(job))
  useInterval(
    () => {
      if (!busy()) void refresh()
    },
    POLL_MS,
    running
  )

  useTitle("Jobs")
  const showMore = useShowMore(
    loaded,
    (list) => list.jobs,
    (job) => document.querySelector<HTMLElement>(`tr[data-job="${job.jobId}"] [data-job-id]`),
    loadMore
  )

  const cancel = async (job: Job) => {
    await cancelling.run(async () => {
      await api.request(`/api/v1/jobs/${encodeURIComponent(job.jobId)}`, { method: "DELETE" })
    })
    await refresh()
  }

  return (
    <>
      <h1 tabIndex={-1}>Jobs</h1>
      {maySubmit ? <Upload onStarted={() => void refresh()} /> : null}
      {cancelling.error === undefined ? null : <ErrorNote error={cancelling.error} what="Could not cancel" />}
      <Show loaded={loaded} what="the jobs">
        {(list) =>
          list.jobs.length === 0 ? (
            <p class="note">No jobs yet.</p>
          ) : (
            <>
              <Table
                class="jobs"
                caption="Jobs of your team, newest first"
                columns={["Job", "Status", "Progress", "Counts", "Duration", "Results"]}
              >
                {list.jobs.map((job) => (
                  <JobRow key={job.jobId} job={job} mayCancel={maySubmit} onCancel={cancel} />
                ))}
              </Table>
              <MorePages items={list.jobs} next={list.nextCursor} more={more} onMore={showMore} things="jobs">
                {shownWords(list)}
              </MorePages>
            </>
          )
        }
      </Show>
    </>
  )
}
