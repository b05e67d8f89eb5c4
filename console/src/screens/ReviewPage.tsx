/**
 * One domain of the review queue (`GET /institution-reviews/{domain}`):
 * how often and when it was met, the evidence — how likely it is an
 * institution and each signal for or against, in words; the nearest known
 * institutions; what each of the team's target groups decides for an
 * address of it now — and the decision: approve it as an institution
 * (name, type, country, region, role; the form starts from suggestions:
 * the nearest institution's name or the domain's words, the type the
 * signals speak for, the country of its ccTLD) or reject it with a reason.
 * A refused write shows the API's field messages beside their fields.
 */
import { useEffect, useRef, useState } from "preact/hooks"
import { ApiError } from "../api.ts"
import type { Approval, HostRole, InstitutionReview, InstitutionType, Rejection } from "../apiTypes.ts"
import { Badge, ErrorNote, Link, Show } from "../components/common.tsx"
import { DayBars, isScopeRefusal, NoReviewScope, REVIEW_SCOPE, ScoreBar } from "../components/ReviewBits.tsx"
import { useScope, useSigned } from "../context.ts"
import { countryName } from "../data/criteria.ts"
import { utcDate } from "../data/days.ts"
import { type FieldMessages, fieldMessages } from "../data/fieldErrors.ts"
import { formatCount, formatInstant } from "../data/format.ts"
import {
  type ApprovalDraft,
  approvalDraft,
  approvalRequest,
  auditLines,
  COUNTRIES,
  nearestNames,
  ROLE_NAMES,
  reviewPath,
  signalLines,
  TYPE_NAMES
} from "../data/reviews.ts"
import { useLoad } from "../hooks.ts"
import { hrefOf } from "../router.ts"

const NO_PROBLEMS: FieldMessages = { byField: {}, other: [] }

/** A refused write: its problem's field messages, or the error itself when it has none. */
const problemsOf = (error: unknown, fields: ReadonlyArray<string>) =>
  error instanceof ApiError ? fieldMessages(error.problem, fields) : NO_PROBLEMS

/** A field's message under it, named by the field's `aria-describedby`. */
const FieldMessage = (props: { readonly id: string; readonly message: string | undefined }) =>
  props.message === undefined ? null : (
    <span id={props.id} class="field-error">
      {props.message}
    </span>
  )

const fieldProps = (id: string, message: string | undefined) =>
  message === undefined ? {} : { "aria-invalid": true as const, "aria-describedby": `${id}-error` }

const Evidence = (props: { readonly review: InstitutionReview }) => {
  const { review } = props
  const lines = signalLines(review.candidate.signals)
  return (
    <>
      <section aria-labelledby="evidence-heading">
        <h2 id="evidence-heading">Evidence</h2>
        <p>
          How likely the domain is an institution, from its name alone: <ScoreBar score={review.candidate.score} />
        </p>
        {lines.length === 0 ? (
          <p class="note">No signal for or against: the name says nothing either way.</p>
        ) : (
          <div class="table-scroll">
            <table class="signals">
              <caption class="visually-hidden">Signals, the weightiest first</caption>
              <thead>
                <tr>
                  <th scope="col">Signal</th>
                  <th scope="col">What was seen</th>
                  <th scope="col">Weighs</th>
                </tr>
              </thead>
              <tbody>
                {lines.map((line, index) => (
                  <tr
                    key={`${line.signal}:${index}`}
                    data-signal={line.signal}
                    data-direction={line.direction}
                    data-weight={line.weight}
                  >
                    <th scope="row">{line.name}</th>
                    <td>{line.detail}</td>
                    <td>
                      <Badge
                        status={line.direction === "for" ? "for" : line.direction === "against" ? "against" : "neither"}
                      />{" "}
                      {line.text}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </section>
      <div class="columns">
        <section aria-labelledby="nearest-heading">
          <h2 id="nearest-heading">Nearest known institutions</h2>
          {review.nearest.length === 0 ? (
            <p class="note">No known institution has a name or domain like it.</p>
          ) : (
            <ul class="nearest">
              {review.nearest.map((near) => (
                <li key={near.id} data-nearest={near.domain}>
                  {near.name ?? <span class="muted">(no name in the data)</span>}{" "}
                  <span class="mono muted">{near.domain}</span>
                  <div class="muted">
                    {TYPE_NAMES[near.type]}
                    {near.country === null ? "" : `, ${countryName(near.country)}`}
                  </div>
                </li>
              ))}
            </ul>
          )}
        </section>
        <section aria-labelledby="decisions-heading">
          <h2 id="decisions-heading">What your target groups decide now</h2>
          {review.decisions.length === 0 ? (
            <p class="note">Your team has no target groups.</p>
          ) : (
            <div class="table-scroll">
              <table class="decisions">
                <caption class="visually-hidden">Each target group's verdict for an address of {review.domain}</caption>
                <thead>
                  <tr>
                    <th scope="col">Target group</th>
                    <th scope="col">Verdict</th>
                  </tr>
                </thead>
                <tbody>
                  {review.decisions.map((decision) => (
                    <tr
                      key={decision.targetGroup}
                      data-decision={decision.targetGroup}
                      data-valid={String(decision.isValid)}
                    >
                      <th scope="row">
                        {decision.name} <div class="mono muted">{decision.targetGroup}</div>
                      </th>
                      <td>
                        <Badge status={decision.isValid ? "eligible" : "ineligible"} />
                        {decision.reasonCode === undefined ? null : (
                          <span class="mono muted"> {decision.reasonCode}</span>
                        )}
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )}
        </section>
      </div>
    </>
  )
}

const APPROVE_FIELDS = ["name", "type", "country", "region", "role"] as const

const ApproveForm = (props: {
  readonly review: InstitutionReview
  readonly onDecided: (review: InstitutionReview, note: string) => void
}) => {
  const { api } = useSigned()
  const [draft, setDraft] = useState<ApprovalDraft>(() => approvalDraft(props.review))
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<Error | undefined>(undefined)
  const problems = error === undefined ? NO_PROBLEMS : problemsOf(error, APPROVE_FIELDS)
  const names = nearestNames(props.review)
  const set = <K extends keyof ApprovalDraft>(key: K, value: ApprovalDraft[K]) =>
    setDraft((before) => ({ ...before, [key]: value }))

  const submit = async (event: Event) => {
    event.preventDefault()
    setBusy(true)
    setError(undefined)
    try {
      const answer = await api.request<InstitutionReview>(reviewPath(props.review.domain, "approve"), {
        method: "POST",
        json: approvalRequest(draft) as Approval
      })
      props.onDecided(answer, `Approved ${answer.domain} as ${answer.approval?.name ?? draft.name}.`)
    } catch (failure) {
      setError(failure as Error)
    } finally {
      setBusy(false)
    }
  }

  return (
    <form class="panel decide" aria-labelledby="approve-heading" onSubmit={submit} noValidate>
      <h3 id="approve-heading">Approve as an institution</h3>
      <p class="muted">
        The domain then counts as a listed institution for your team's target groups and offers, and is written to the
        reviewed dataset for review in git.
      </p>
      <div class="form-grid">
        <div class="field grow">
          <label for="approve-name">Name</label>
          <input
            id="approve-name"
            type="text"
            value={draft.name}
            maxLength={300}
            required
            list={names.length === 0 ? undefined : "approve-name-suggestions"}
            onInput={(event) => set("name", event.currentTarget.value)}
            {...fieldProps("approve-name", problems.byField.name)}
          />
          {names.length === 0 ? null : (
            <datalist id="approve-name-suggestions">
              {names.map((name) => (
                <option key={name} value={name} />
              ))}
            </datalist>
          )}
          <span class="hint">A suggestion from the domain: change it to the institution's own name.</span>
          <FieldMessage id="approve-name-error" message={problems.byField.name} />
        </div>
        <div class="field">
          <label for="approve-type">Type</label>
          <select
            id="approve-type"
            value={draft.type}
            onChange={(event) => set("type", event.currentTarget.value as InstitutionType)}
            {...fieldProps("approve-type", problems.byField.type)}
          >
            {(Object.keys(TYPE_NAMES) as Array<InstitutionType>).map((type) => (
              <option key={type} value={type}>
                {TYPE_NAMES[type]}
              </option>
            ))}
          </select>
          <FieldMessage id="approve-type-error" message={problems.byField.type} />
        </div>
        <div class="field">
          <label for="approve-country">Country</label>
          <select
            id="approve-country"
            value={draft.country}
            onChange={(event) => set("country", event.currentTarget.value)}
            {...fieldProps("approve-country", problems.byField.country)}
          >
            <option value="">No country</option>
            {COUNTRIES.map((country) => (
              <option key={country.code} value={country.code}>
                {country.name} ({country.code})
              </option>
            ))}
          </select>
          <FieldMessage id="approve-country-error" message={problems.byField.country} />
        </div>
        <div class="field">
          <label for="approve-region">Region (optional)</label>
          <input
            id="approve-region"
            type="text"
            value={draft.region}
            placeholder="e.g. DE-HH"
            autocomplete="off"
            spellcheck={false}
            onInput={(event) => set("region", event.currentTarget.value)}
            {...fieldProps("approve-region", problems.byField.region)}
          />
          <FieldMessage id="approve-region-error" message={problems.byField.region} />
        </div>
        <div class="field">
          <label for="approve-role">Serves (optional)</label>
          <select
            id="approve-role"
            value={draft.role}
            onChange={(event) => set("role", event.currentTarget.value as HostRole | "")}
            {...fieldProps("approve-role", problems.byField.role)}
          >
            <option value="">Not stated</option>
            {(Object.keys(ROLE_NAMES) as Array<HostRole>).map((role) => (
              <option key={role} value={role}>
                {ROLE_NAMES[role]}
              </option>
            ))}
          </select>
          <FieldMessage id="approve-role-error" message={problems.byField.role} />
        </div>
      </div>
      <div class="actions">
        <button type="submit" class="primary" disabled={busy}>
          {busy ? "Approving…" : "Approve"}
        </button>
      </div>
      <Refusal error={error} problems={problems} what="The approval was refused" />
    </form>
  )
}

const RejectForm = (props: {
  readonly review: InstitutionReview
  readonly onDecided: (review: InstitutionReview, note: string) => void
}) => {
  const { api } = useSigned()
  const [reason, setReason] = useState("")
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<Error | undefined>(undefined)
  const problems = error === undefined ? NO_PROBLEMS : problemsOf(error, ["reason"])

  const submit = async (event: Event) => {
    event.preventDefault()
    setBusy(true)
    setError(undefined)
    try {
      const answer = await api.request<InstitutionReview>(reviewPath(props.review.domain, "reject"), {
        method: "POST",
        json: { reason: reason.trim() } satisfies Rejection
      })
      props.onDecided(answer, `Rejected ${answer.domain}.`)
    } catch (failure) {
      setError(failure as Error)
    } finally {
      setBusy(false)
    }
  }

  return (
    <form class="panel decide" aria-labelledby="reject-heading" onSubmit={submit} noValidate>
      <h3 id="reject-heading">Reject</h3>
      <p class="muted">
        {props.review.status === "approved"
          ? "The domain stops being an institution of your team's; the reason is kept with the decision."
          : "The domain stays out, and the reason is kept with the decision."}
      </p>
      <div class="field">
        <label for="reject-reason">Reason</label>
        <textarea
          id="reject-reason"
          rows={2}
          maxLength={500}
          required
          value={reason}
          onInput={(event) => setReason(event.currentTarget.value)}
          {...fieldProps("reject-reason", problems.byField.reason)}
        />
        <FieldMessage id="reject-reason-error" message={problems.byField.reason} />
      </div>
      <div class="actions">
        <button type="submit" class="danger" disabled={busy}>
          {busy ? "Rejecting…" : "Reject"}
        </button>
      </div>
      <Refusal error={error} problems={problems} what="The rejection was refused" />
    </form>
  )
}

/** Why a write was refused: the problem's words, and the field problems no field of the form shows. */
const Refusal = (props: {
  readonly error: Error | undefined
  readonly problems: FieldMessages
  readonly what: string
}) => {
  if (props.error === undefined) return null
  if (isScopeRefusal(props.error)) return <NoReviewScope />
  return (
    <div class="refusal">
      <ErrorNote error={props.error} what={props.what} />
      {props.problems.other.length === 0 ? null : (
        <ul class="problems">
          {props.problems.other.map((line) => (
            <li key={line}>{line}</li>
          ))}
        </ul>
      )}
    </div>
  )
}

const DecisionNow = (props: { readonly review: InstitutionReview }) => {
  const [line] = auditLines([props.review])
  if (line === undefined) return null
  return (
    <p class="note" data-decided={line.decision}>
      <Badge status={line.decision} />{" "}
      {line.decision === "approved" ? `Approved ${line.text}` : `Rejected: ${line.text}`}, by key{" "}
      <span class="mono">{line.by}</span> at {formatInstant(line.at)}.
    </p>
  )
}

const ReviewView = (props: {
  readonly review: InstitutionReview
  readonly onDecided: (review: InstitutionReview, note: string) => void
  readonly done: string | undefined
}) => {
  const { review } = props
  return (
    <>
      <p class="offer-status">
        <Badge status={review.status} /> <span>met {formatCount(review.count)} times</span>
        {review.accepted === 0 ? null : <span class="muted">({formatCount(review.accepted)} accepted as likely)</span>}
      </p>
      <dl class="facts">
        <div>
          <dt>First seen</dt>
          <dd>{formatInstant(review.firstSeen)}</dd>
        </div>
        <div>
          <dt>Last seen</dt>
          <dd>{formatInstant(review.lastSeen)}</dd>
        </div>
        <div>
          <dt>Last 30 days</dt>
          <dd>
            <DayBars days={review.days} today={utcDate(Date.now())} />{" "}
            <span class="muted">{formatCount(review.days.reduce((sum, day) => sum + day.count, 0))} times</span>
          </dd>
        </div>
      </dl>
      <div aria-live="polite" class="visually-hidden">
        {props.done === undefined ? null : (
          <p role="status" data-done>
            {props.done}
          </p>
        )}
      </div>
      <DecisionNow review={review} />
      <Evidence review={review} />
      <section aria-labelledby="decide-heading">
        <h2 id="decide-heading">{review.status === "pending" ? "Decide" : "Change the decision"}</h2>
        <div class="columns">
          {review.status === "approved" ? null : (
            <ApproveForm key={`approve:${review.status}`} review={review} onDecided={props.onDecided} />
          )}
          {review.status === "rejected" ? null : (
            <RejectForm key={`reject:${review.status}`} review={review} onDecided={props.onDecided} />
          )}
        </div>
      </section>
    </>
  )
}

export const ReviewPage = (props: { readonly domain: string }) => {
  const { api } = useSigned()
  const mayReview = useScope(REVIEW_SCOPE)
  const [loaded] = useLoad(
    () => (mayReview ? api.request<InstitutionReview>(reviewPath(props.domain)) : Promise.resolve(undefined)),
    `review:${props.domain}`
  )
  const [decided, setDecided] = useState<{ review: InstitutionReview; note: string } | undefined>(undefined)
  const heading = useRef<HTMLHeadingElement>(null)

  useEffect(() => {
    document.title = `${props.domain} · Reviews · Campusgate console`
  }, [props.domain])

  const onDecided = (review: InstitutionReview, note: string) => {
    setDecided({ review, note })
    heading.current?.focus()
  }

  return (
    <>
      <nav aria-label="Breadcrumb" class="breadcrumb">
        <Link href={hrefOf({ screen: "reviews" })}>Reviews</Link> <span aria-hidden="true">/</span>{" "}
        <span class="mono">{props.domain}</span>
      </nav>
      <h1 tabIndex={-1} ref={heading} class="mono-heading">
        {props.domain}
      </h1>
      {!mayReview || (loaded.state === "failed" && isScopeRefusal(loaded.error)) ? (
        <NoReviewScope />
      ) : (
        <Show loaded={loaded} what="the domain's review">
          {(review) =>
            review === undefined ? null : (
              <ReviewView review={decided?.review ?? review} onDecided={onDecided} done={decided?.note} />
            )
          }
        </Show>
      )}
    </>
  )
}
