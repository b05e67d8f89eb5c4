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
import type { ComponentChildren } from "preact"
import { useRef, useState } from "preact/hooks"
import { ApiError } from "../api.ts"
import type { Approval, HostRole, InstitutionReview, InstitutionType, Rejection } from "../apiTypes.ts"
import { Badge, ErrorNote, Fact, Link, Options, Show, Table } from "../components/common.tsx"
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
import { useLoad, useTitle, useWrite } from "../hooks.ts"
import { hrefOf } from "../router.ts"

const NO_PROBLEMS: FieldMessages = { byField: {}, other: [] }

/** The props that tie a field's control to its message, when it has one. */
const fieldProps = (id: string, message: string | undefined) =>
  message === undefined ? {} : { "aria-invalid": true as const, "aria-describedby": `${id}-error` }

/** A field of a decision form: its label, its control (given `fieldProps`), and the API's message for it under it. */
const Field = (props: {
  readonly id: string
  readonly label: string
  readonly message: string | undefined
  readonly grow?: boolean
  readonly children: (tie: ReturnType<typeof fieldProps>) => ComponentChildren
}) => (
  <div class={props.grow ? "field grow" : "field"}>
    <label for={props.id}>{props.label}</label>
    {props.children(fieldProps(props.id, props.message))}
    {props.message === undefined ? null : (
      <span id={`${props.id}-error`} class="field-error">
        {props.message}
      </span>
    )}
  </div>
)

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
          <Table
            class="signals"
            caption="Signals, the weightiest first"
            columns={["Signal", "What was seen", "Weighs"]}
          >
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
          </Table>
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
            <Table
              class="decisions"
              caption={`Each target group's verdict for an address of ${review.domain}`}
              columns={["Target group", "Verdict"]}
            >
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
                    {decision.reasonCode === undefined ? null : <span class="mono muted"> {decision.reasonCode}</span>}
                  </td>
                </tr>
              ))}
            </Table>
          )}
        </section>
      </div>
    </>
  )
}

interface DecideProps {
  readonly review: InstitutionReview
  readonly onDecided: (review: InstitutionReview, note: string) => void
}

/**
 * A decision's write (`approve` or `reject` the domain): `decide` posts the
 * body, then hands the answer to `onDecided` with the note `noteOf` words;
 * a refusal's field messages are sorted onto the form's `fields`.
 */
const useDecision = (props: DecideProps, decision: "approve" | "reject", fields: ReadonlyArray<string>) => {
  const { api } = useSigned()
  const { busy, error, run } = useWrite()
  const problems = error instanceof ApiError ? fieldMessages(error.problem, fields) : NO_PROBLEMS
  const decide = (event: Event, body: Approval | Rejection, noteOf: (answer: InstitutionReview) => string) => {
    event.preventDefault()
    return run(async () => {
      const answer = await api.request<InstitutionReview>(reviewPath(props.review.domain, decision), {
        method: "POST",
        json: body
      })
      props.onDecided(answer, noteOf(answer))
    })
  }
  return { busy, error, problems, decide }
}

/** A decision's form: what it does, its fields, the button, and why it was refused. */
const DecisionForm = (props: {
  readonly id: "approve" | "reject"
  readonly heading: string
  readonly intro: string
  readonly button: readonly [label: string, busyLabel: string, kind: "primary" | "danger"]
  readonly refused: string
  readonly write: Omit<ReturnType<typeof useDecision>, "decide">
  readonly onSubmit: (event: Event) => void
  readonly children: ComponentChildren
}) => {
  const [label, busyLabel, kind] = props.button
  const { busy, error, problems } = props.write
  return (
    <form class="panel decide" aria-labelledby={`${props.id}-heading`} onSubmit={props.onSubmit} noValidate>
      <h3 id={`${props.id}-heading`}>{props.heading}</h3>
      <p class="muted">{props.intro}</p>
      {props.children}
      <div class="actions">
        <button type="submit" class={kind} disabled={busy}>
          {busy ? busyLabel : label}
        </button>
      </div>
      <Refusal error={error} problems={problems} what={props.refused} />
    </form>
  )
}

const APPROVE_FIELDS = ["name", "type", "country", "region", "role"] as const

const TYPE_CHOICES = Object.entries(TYPE_NAMES) as Array<[InstitutionType, string]>
const COUNTRY_CHOICES: ReadonlyArray<readonly [string, string]> = [
  ["", "No country"],
  ...COUNTRIES.map((country) => [country.code, `${country.name} (${country.code})`] as const)
]
const ROLE_CHOICES = [["", "Not stated"], ...Object.entries(ROLE_NAMES)] as Array<[HostRole | "", string]>

const ApproveForm = (props: DecideProps) => {
  const [draft, setDraft] = useState<ApprovalDraft>(() => approvalDraft(props.review))
  const { decide, ...write } = useDecision(props, "approve", APPROVE_FIELDS)
  const messages = write.problems.byField
  const names = nearestNames(props.review)
  const set = <K extends keyof ApprovalDraft>(key: K, value: ApprovalDraft[K]) =>
    setDraft((before) => ({ ...before, [key]: value }))
  /** A field of the draft chosen from a list. */
  const select = <K extends "type" | "country" | "role">(
    key: K,
    label: string,
    choices: ReadonlyArray<readonly [ApprovalDraft[K], string]>
  ) => (
    <Field id={`approve-${key}`} label={label} message={messages[key]}>
      {(tie) => (
        <select
          id={`approve-${key}`}
          value={draft[key]}
          onChange={(event) => set(key, event.currentTarget.value as ApprovalDraft[K])}
          {...tie}
        >
          <Options choices={choices} />
        </select>
      )}
    </Field>
  )

  return (
    <DecisionForm
      id="approve"
      heading="Approve as an institution"
      intro="The domain then counts as a listed institution for your team's target groups and offers, and is written to the reviewed dataset for review in git."
      button={["Approve", "Approving…", "primary"]}
      refused="The approval was refused"
      write={write}
      onSubmit={(event) =>
        decide(
          event,
          approvalRequest(draft) as Approval,
          (answer) => `Approved ${answer.domain} as ${answer.approval?.name ?? draft.name}.`
        )
      }
    >
      <div class="form-grid">
        <Field id="approve-name" label="Name" message={messages.name} grow>
          {(tie) => (
            <>
              <input
                id="approve-name"
                type="text"
                value={draft.name}
                maxLength={300}
                required
                list={names.length === 0 ? undefined : "approve-name-suggestions"}
                onInput={(event) => set("name", event.currentTarget.value)}
                {...tie}
              />
              {names.length === 0 ? null : (
                <datalist id="approve-name-suggestions">
                  {names.map((name) => (
                    <option key={name} value={name} />
                  ))}
                </datalist>
              )}
              <span class="hint">A suggestion from the domain: change it to the institution's own name.</span>
            </>
          )}
        </Field>
        {select("type", "Type", TYPE_CHOICES)}
        {select("country", "Country", COUNTRY_CHOICES)}
        <Field id="approve-region" label="Region (optional)" message={messages.region}>
          {(tie) => (
            <input
              id="approve-region"
              type="text"
              value={draft.region}
              placeholder="e.g. DE-HH"
              autocomplete="off"
              spellcheck={false}
              onInput={(event) => set("region", event.currentTarget.value)}
              {...tie}
            />
          )}
        </Field>
        {select("role", "Serves (optional)", ROLE_CHOICES)}
      </div>
    </DecisionForm>
  )
}

const RejectForm = (props: DecideProps) => {
  const [reason, setReason] = useState("")
  const { decide, ...write } = useDecision(props, "reject", ["reason"])

  return (
    <DecisionForm
      id="reject"
      heading="Reject"
      intro={
        props.review.status === "approved"
          ? "The domain stops being an institution of your team's; the reason is kept with the decision."
          : "The domain stays out, and the reason is kept with the decision."
      }
      button={["Reject", "Rejecting…", "danger"]}
      refused="The rejection was refused"
      write={write}
      onSubmit={(event) =>
        decide(event, { reason: reason.trim() } satisfies Rejection, (answer) => `Rejected ${answer.domain}.`)
      }
    >
      <Field id="reject-reason" label="Reason" message={write.problems.byField.reason}>
        {(tie) => (
          <textarea
            id="reject-reason"
            rows={2}
            maxLength={500}
            required
            value={reason}
            onInput={(event) => setReason(event.currentTarget.value)}
            {...tie}
          />
        )}
      </Field>
    </DecisionForm>
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
        <Fact term="First seen">{formatInstant(review.firstSeen)}</Fact>
        <Fact term="Last seen">{formatInstant(review.lastSeen)}</Fact>
        <Fact term="Last 30 days">
          <DayBars days={review.days} today={utcDate(Date.now())} />{" "}
          <span class="muted">{formatCount(review.days.reduce((sum, day) => sum + day.count, 0))} times</span>
        </Fact>
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

  useTitle(`${props.domain} · Reviews`)

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
