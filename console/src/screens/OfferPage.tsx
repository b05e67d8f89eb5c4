/**
 * One offer: its status and window, the buttons that change its status
 * (offers made through the API only), and its usage — daily validations,
 * eligible and ineligible over the last 7, 30 or 90 days as a chart (with
 * the same figures as a table and a CSV download), ineligible validations
 * by reason, unique emails, matches by target group, the verification
 * funnel and the hosted page's funnel (flows started, the code step
 * reached, completed, and where flows stopped). The status endpoint answers the last 90 days (`?days=90`) and
 * the shorter windows are cut from them; the other figures are the
 * offer's totals.
 */
import { useState } from "preact/hooks"
import type { Offer, OfferStatus, OfferStatusAnswer, OfferUsage } from "../apiTypes.ts"
import { Bar, Bars } from "../components/Bars.tsx"
import { Badge, ErrorNote, Fact, Link, Segmented, Show, Table } from "../components/common.tsx"
import { DailyChart } from "../components/DailyChart.tsx"
import { useScope, useSigned } from "../context.ts"
import type { Bar as BarFigures } from "../data/bars.ts"
import { barsOf } from "../data/bars.ts"
import { dailyCsv, dailyCsvName } from "../data/csv.ts"
import { fillDays, utcDate, WINDOWS, type WindowDays, windowTotals } from "../data/days.ts"
import { formatCount, formatInstant, formatShare } from "../data/format.ts"
import { funnelOf, hostedFunnelOf } from "../data/funnel.ts"
import { type OfferAction, offerActions, windowText } from "../data/offers.ts"
import { useLoad, useTitle, useWrite } from "../hooks.ts"
import { hrefOf } from "../router.ts"

const path = (id: string) => `/api/v1/offers/${encodeURIComponent(id)}`

/** Saves text as a file through a temporary object URL (nothing leaves the page). */
const saveFile = (text: string, name: string, type: string) => {
  const url = URL.createObjectURL(new Blob([text], { type }))
  const anchor = document.createElement("a")
  anchor.href = url
  anchor.download = name
  document.body.append(anchor)
  anchor.click()
  anchor.remove()
  setTimeout(() => URL.revokeObjectURL(url), 10_000)
}

/** The funnel's counts (`sent`: each verification once, when its first message reached the mail server). */
const funnelCounts = (usage: OfferUsage) => {
  const verifications = usage.verifications
  return {
    started: verifications?.started ?? 0,
    sent: verifications?.sent ?? 0,
    verified: verifications?.verified ?? 0
  }
}

/** All-time counts of the offer's validations as bars, under what they count. */
const TotalBars = (props: {
  readonly id: string
  readonly heading: string
  readonly total: string
  readonly bars: ReadonlyArray<BarFigures>
  readonly label: string
  readonly empty: string
}) => (
  <section aria-labelledby={`${props.id}-heading`}>
    <h2 id={`${props.id}-heading`}>{props.heading}</h2>
    <p class="muted">All time, {props.total}.</p>
    <Bars bars={props.bars} label={props.label} empty={props.empty} />
  </section>
)

const WINDOW_CHOICES = WINDOWS.map((option) => [option, `${option} days`] as const)

const Usage = (props: { readonly offer: Offer; readonly status: OfferStatusAnswer }) => {
  const [days, setDays] = useState<WindowDays>(30)
  const usage = props.status.usage
  // The daemon's today (the last of the days it answered), so a browser's clock that is off moves nothing.
  const today = usage.daily?.at(-1)?.date ?? utcDate(Date.now())
  const window = fillDays(usage.daily ?? [], days, today)
  const totals = windowTotals(window)
  const funnel = funnelOf(funnelCounts(usage))
  const hosted = hostedFunnelOf(usage.hostedFlow)
  const unique = usage.uniqueEmails
  return (
    <>
      <section aria-labelledby="daily-heading">
        <div class="section-head">
          <h2 id="daily-heading">Daily validations</h2>
          <Segmented legend="Window" name="window" choices={WINDOW_CHOICES} chosen={days} onChoose={setDays} />
        </div>
        <dl class="figures" aria-label={`Totals of the last ${days} days`}>
          <Fact term="Validations" figure="validations">
            {formatCount(totals.validations)}
          </Fact>
          <Fact term="Eligible" figure="eligible">
            {formatCount(totals.eligible)}
          </Fact>
          <Fact term="Ineligible" figure="ineligible">
            {formatCount(totals.ineligible)}
          </Fact>
          <Fact term="Unique emails (all time)" figure="unique">
            {unique.estimate > 0 ? "≈ " : ""}
            {formatCount(unique.estimate)}
          </Fact>
        </dl>
        <DailyChart
          days={window}
          label={`Validations, eligible and ineligible per day over the last ${days} days (UTC)`}
        />
        <div class="actions">
          <button
            type="button"
            onClick={() =>
              saveFile(dailyCsv(window), dailyCsvName(props.offer.id, today, days), "text/csv;charset=utf-8")
            }
          >
            Download CSV of these {days} days
          </button>
        </div>
        <details>
          <summary>The figures as a table</summary>
          <Table
            class="daily"
            caption={`Validations per day, last ${days} days`}
            columns={["Day (UTC)", "Validations", "Eligible", "Ineligible"]}
          >
            {window.map((day) => (
              <tr key={day.date} data-date={day.date}>
                <th scope="row">{day.date}</th>
                <td>{day.validations}</td>
                <td>{day.eligible}</td>
                <td>{day.ineligible}</td>
              </tr>
            ))}
          </Table>
        </details>
      </section>
      <div class="columns">
        <TotalBars
          id="reasons"
          heading="Ineligible by reason"
          total={`${formatCount(usage.ineligible)} ineligible validations`}
          bars={barsOf(usage.ineligibleByReason)}
          label="Ineligible validations by reason"
          empty="No ineligible validations yet."
        />
        <TotalBars
          id="matches"
          heading="Matches by target group"
          total={`${formatCount(usage.eligible)} eligible validations`}
          bars={barsOf(usage.matchesByTargetGroup)}
          label="Eligible validations by matching target group"
          empty="No matches yet."
        />
      </div>
      <section aria-labelledby="funnel-heading">
        <h2 id="funnel-heading">Verifications</h2>
        {funnel === undefined ? (
          <p class="note">No verifications started yet.</p>
        ) : (
          <ol class="funnel" aria-label="Verification funnel">
            {funnel.map((step) => (
              <li key={step.step} data-step={step.step}>
                <Bar name={step.label} length={step.ofStarted} count={step.count} share={step.ofStarted} />
              </li>
            ))}
          </ol>
        )}
      </section>
      <section aria-labelledby="hosted-heading">
        <h2 id="hosted-heading">Hosted verification page</h2>
        {hosted === undefined ? (
          <p class="note">No flows started on the hosted page yet.</p>
        ) : (
          <>
            <p class="muted">
              All time. A flow counts once, on its first page; flows still open count as left at their step.
            </p>
            <ol class="funnel" aria-label="Hosted page funnel">
              {hosted.steps.map((step) => (
                <li key={step.step} data-step={step.step}>
                  <Bar name={step.label} length={step.ofStarted} count={step.count} share={step.ofStarted} />
                </li>
              ))}
            </ol>
            <dl class="figures" aria-label="Where hosted flows stopped">
              {hosted.stopped.map((stopped) => (
                <Fact key={stopped.step} term={stopped.label} figure={stopped.step}>
                  {formatCount(stopped.count)}
                  {stopped.ofStarted === undefined ? null : (
                    <span class="muted share"> ({formatShare(stopped.ofStarted)} of flows)</span>
                  )}
                </Fact>
              ))}
            </dl>
          </>
        )}
      </section>
      <p class="muted">
        First validated {formatInstant(usage.firstValidatedAt)}, last {formatInstant(usage.lastValidatedAt)}. Unique
        emails are estimated (HyperLogLog, ±{formatShare(unique.relativeStandardError)}).
      </p>
    </>
  )
}

const Actions = (props: { readonly offer: Offer; readonly onChanged: () => Promise<void> }) => {
  const { api } = useSigned()
  const mayWrite = useScope("offers:write")
  const { busy, error, run } = useWrite()
  const [confirming, setConfirming] = useState<OfferAction | undefined>(undefined)
  const [done, setDone] = useState<string | undefined>(undefined)
  const actions = offerActions(props.offer)
  if (props.offer.source !== "api")
    return <p class="muted">Defined in the config directory: change it there (it is read-only here).</p>
  if (!mayWrite || actions.length === 0) return null

  const apply = (action: OfferAction) => {
    setConfirming(undefined)
    return run(async () => {
      await api.request(path(props.offer.id), { method: "PATCH", json: { status: action.status as OfferStatus } })
      setDone(`Set to ${action.status}.`)
      await props.onChanged()
    })
  }

  return (
    <div class="actions">
      {actions.map((action) => (
        <button
          key={action.label}
          type="button"
          class={action.status === "archived" ? "danger" : undefined}
          disabled={busy}
          onClick={() => (action.status === "archived" ? setConfirming(action) : apply(action))}
        >
          {action.label}
        </button>
      ))}
      {confirming === undefined ? null : (
        <div class="confirm" role="alertdialog" aria-labelledby="confirm-text">
          <p id="confirm-text">Archive this offer for good? Archived offers cannot come back.</p>
          <button type="button" class="danger" onClick={() => apply(confirming)}>
            Archive for good
          </button>
          <button type="button" onClick={() => setConfirming(undefined)}>
            Keep it
          </button>
        </div>
      )}
      {done === undefined ? null : (
        <p class="note" role="status">
          {done}
        </p>
      )}
      {error === undefined ? null : <ErrorNote error={error} what="The change was refused" />}
    </div>
  )
}

export const OfferPage = (props: { readonly id: string }) => {
  const { api } = useSigned()
  const [loaded, reload] = useLoad(async () => {
    const [offer, status] = await Promise.all([
      api.request<Offer>(path(props.id)),
      api.request<OfferStatusAnswer>(`${path(props.id)}/status`)
    ])
    return { offer, status }
  }, `offer:${props.id}`)
  const name = loaded.state === "ready" ? loaded.value.offer.name : props.id

  useTitle(`${name} · Offers`)

  return (
    <>
      <nav aria-label="Breadcrumb" class="breadcrumb">
        <Link href={hrefOf({ screen: "offers" })}>Offers</Link> <span aria-hidden="true">/</span>{" "}
        <span class="mono">{props.id}</span>
      </nav>
      <h1 tabIndex={-1}>{name}</h1>
      <Show loaded={loaded} what="the offer">
        {({ offer, status }) => (
          <>
            <p class="offer-status">
              <Badge status={status.status} /> <span>{status.statusReason}</span>
            </p>
            <dl class="facts">
              <Fact term="Window">{windowText(offer, formatInstant)}</Fact>
              <Fact term="Target groups">{offer.targetGroups.join(", ")}</Fact>
              {offer.description === undefined ? null : <Fact term="Description">{offer.description}</Fact>}
            </dl>
            <Actions offer={offer} onChanged={reload} />
            <Usage offer={offer} status={status} />
          </>
        )}
      </Show>
    </>
  )
}
