/**
 * The Reviews screen: the unknown domains the team's traffic met (the
 * review queue, `GET /institution-reviews`), pending, approved or rejected,
 * most met, most likely or last seen first, a page at a time ("Load more
 * domains" appends the next; `?limit=N` in the address sets the page size,
 * as on the Jobs screen): each with how often it was met, when last, how
 * likely it is an institution and its last 30 days as small bars, a link
 * to its evidence and the decision (`ReviewPage.tsx`); and the audit
 * trail of the decisions made, newest first. A key without
 * `institutions:review` is told so instead.
 */
import { useEffect, useRef, useState } from "preact/hooks"
import { type Api, listAll } from "../api.ts"
import type { InstitutionReview, ReviewList, ReviewSort, ReviewStatus } from "../apiTypes.ts"
import { Badge, Link, MorePages, Options, Segmented, Show, Table } from "../components/common.tsx"
import { DayBars, isScopeRefusal, NoReviewScope, REVIEW_SCOPE, ScoreBar } from "../components/ReviewBits.tsx"
import { useScope, useSigned } from "../context.ts"
import { utcDate } from "../data/days.ts"
import { formatCount, formatInstant } from "../data/format.ts"
import { pageSizeOf } from "../data/jobPages.ts"
import {
  auditLines,
  REVIEW_SORTS,
  REVIEW_STATUSES,
  REVIEWS_PATH,
  type ReviewPages,
  reviewsPageUrl,
  withReviewPage
} from "../data/reviews.ts"
import { type Loaded, type More, useLoad, useShowMore, useTitle } from "../hooks.ts"
import { hrefOf } from "../router.ts"

interface Query {
  readonly status: ReviewStatus
  readonly sort: ReviewSort
  readonly limit: number
}

/** The queue as state: the first page of a tab and order on mount and on change, `loadMore` appends the next. */
const useReviewPages = (api: Api, query: Query) => {
  const [loaded, setLoaded] = useState<Loaded<ReviewPages>>({ state: "loading" })
  const [more, setMore] = useState<More>("idle")
  const shown = useRef<ReviewPages | undefined>(undefined)
  const ticket = useRef(0)

  useEffect(() => {
    const mine = ++ticket.current
    shown.current = undefined
    setLoaded({ state: "loading" })
    setMore("idle")
    api.request<ReviewList>(reviewsPageUrl(query)).then(
      (page) => {
        if (mine !== ticket.current) return
        shown.current = withReviewPage(undefined, page)
        setLoaded({ state: "ready", value: shown.current })
      },
      (error: Error) => {
        if (mine === ticket.current) setLoaded({ state: "failed", error })
      }
    )
    return () => {
      ticket.current++
    }
  }, [api, query.status, query.sort, query.limit])

  const loadMore = async () => {
    const before = shown.current
    if (before === undefined || before.nextCursor === null) return
    const mine = ticket.current
    setMore("loading")
    try {
      const page = await api.request<ReviewList>(reviewsPageUrl(query, before.nextCursor))
      if (mine !== ticket.current) return
      shown.current = withReviewPage(before, page)
      setLoaded({ state: "ready", value: shown.current })
      setMore("idle")
    } catch (error) {
      if (mine === ticket.current) setMore(error as Error)
    }
  }

  return { loaded, more, loadMore }
}

/** How many domains are shown, whether that is all of them, and how many the queue let go. */
const shownWords = (list: ReviewPages): string => {
  const count = list.reviews.length
  const shown =
    list.nextCursor === null
      ? `${formatCount(count)} ${count === 1 ? "domain" : "domains"}.`
      : `Showing the first ${formatCount(count)} domains.`
  return list.dropped === 0
    ? shown
    : `${shown} ${formatCount(list.dropped)} rarely met, unlikely domains were let go to keep the queue bounded.`
}

/** What was decided (the name approved, the reason rejected), by which key and when. */
const Decided = (props: { readonly what: string; readonly by: string; readonly at: string }) => (
  <>
    {props.what}
    <div class="muted">
      by <span class="mono">{props.by}</span>, {formatInstant(props.at)}
    </div>
  </>
)

const Decision = (props: { readonly review: InstitutionReview }) => {
  const { approval, rejection } = props.review
  if (approval !== undefined) return <Decided what={approval.name} by={approval.approvedBy} at={approval.approvedAt} />
  if (rejection !== undefined)
    return <Decided what={rejection.reason} by={rejection.rejectedBy} at={rejection.rejectedAt} />
  return <span class="muted">—</span>
}

const ReviewRow = (props: {
  readonly review: InstitutionReview
  readonly status: ReviewStatus
  readonly today: string
}) => {
  const { review } = props
  return (
    <tr data-review={review.domain} data-status={review.status}>
      <td>
        <Link href={hrefOf({ screen: "review", domain: review.domain })}>
          <span class="mono" data-review-domain>
            {review.domain}
          </span>
        </Link>
        <div class="muted">first seen {formatInstant(review.firstSeen)}</div>
      </td>
      <td data-count={review.count}>
        {formatCount(review.count)}
        {review.accepted === 0 ? null : <div class="muted">{formatCount(review.accepted)} accepted as likely</div>}
      </td>
      <td>{formatInstant(review.lastSeen)}</td>
      <td class="score-cell">
        <ScoreBar score={review.candidate.score} />
      </td>
      <td>
        <DayBars days={review.days} today={props.today} />
      </td>
      {props.status === "pending" ? null : (
        <td>
          <Decision review={review} />
        </td>
      )}
    </tr>
  )
}

const Queue = (props: { readonly limit: number }) => {
  const { api } = useSigned()
  const [status, setStatus] = useState<ReviewStatus>("pending")
  const [sort, setSort] = useState<ReviewSort>("count")
  const { loaded, more, loadMore } = useReviewPages(api, { status, sort, limit: props.limit })
  const today = utcDate(Date.now())
  const showMore = useShowMore(
    loaded,
    (list) => list.reviews,
    (review) => document.querySelector<HTMLElement>(`tr[data-review="${CSS.escape(review.domain)}"] a`),
    loadMore
  )

  const tabName = REVIEW_STATUSES.find(([value]) => value === status)?.[1] ?? status

  return (
    <section aria-labelledby="queue-heading">
      <h2 id="queue-heading" class="visually-hidden">
        The review queue
      </h2>
      <form class="toolbar" aria-label="Which domains" onSubmit={(event) => event.preventDefault()}>
        <Segmented legend="Show" name="review-status" choices={REVIEW_STATUSES} chosen={status} onChoose={setStatus} />
        <div class="field">
          <label for="review-sort">Order</label>
          <select id="review-sort" value={sort} onChange={(event) => setSort(event.currentTarget.value as ReviewSort)}>
            <Options choices={REVIEW_SORTS} />
          </select>
        </div>
      </form>
      {loaded.state === "failed" && isScopeRefusal(loaded.error) ? (
        <NoReviewScope />
      ) : (
        <Show loaded={loaded} what="the review queue">
          {(list) => (
            <>
              {list.reviews.length === 0 ? (
                <p class="note" data-empty-queue>
                  {status === "pending"
                    ? "No unknown domains wait for a review. A domain comes here when your team's validations refuse it as an unknown institution."
                    : `No ${tabName.toLowerCase()} domains yet.`}
                </p>
              ) : (
                <Table
                  class="reviews"
                  caption={`${tabName} domains of the review queue`}
                  columns={[
                    "Domain",
                    "Met",
                    "Last seen",
                    "Likely an institution",
                    "Last 30 days",
                    ...(status === "pending" ? [] : [status === "approved" ? "Approved as" : "Reason"])
                  ]}
                >
                  {list.reviews.map((review) => (
                    <ReviewRow key={review.domain} review={review} status={status} today={today} />
                  ))}
                </Table>
              )}
              <MorePages items={list.reviews} next={list.nextCursor} more={more} onMore={showMore} things="domains">
                {shownWords(list)}
              </MorePages>
            </>
          )}
        </Show>
      )}
    </section>
  )
}

/** The decisions of the team's operators, newest first: approved and rejected domains, at most a few pages of each. */
const AuditTrail = () => {
  const { api } = useSigned()
  const [loaded] = useLoad(async () => {
    const [approved, rejected] = await Promise.all([
      listAll<InstitutionReview>(api, `${REVIEWS_PATH}?status=approved&sort=recent`, 5),
      listAll<InstitutionReview>(api, `${REVIEWS_PATH}?status=rejected&sort=recent`, 5)
    ])
    return auditLines([...approved, ...rejected])
  }, "review-audit")
  if (loaded.state === "failed" && isScopeRefusal(loaded.error)) return null
  return (
    <section aria-labelledby="audit-heading">
      <h2 id="audit-heading">Audit trail</h2>
      <Show loaded={loaded} what="the decisions">
        {(lines) =>
          lines.length === 0 ? (
            <p class="note">No domain has been approved or rejected yet.</p>
          ) : (
            <Table
              class="audit"
              caption="Decisions on the review queue, newest first"
              columns={["When", "Domain", "Decision", "By key", "As or why"]}
            >
              {lines.map((line) => (
                <tr key={`${line.decision}:${line.domain}`} data-audit={line.domain} data-decision={line.decision}>
                  <td>{formatInstant(line.at)}</td>
                  <td>
                    <Link href={hrefOf({ screen: "review", domain: line.domain })}>
                      <span class="mono">{line.domain}</span>
                    </Link>
                  </td>
                  <td>
                    <Badge status={line.decision} />
                  </td>
                  <td class="mono" data-by>
                    {line.by}
                  </td>
                  <td>{line.text}</td>
                </tr>
              ))}
            </Table>
          )
        }
      </Show>
    </section>
  )
}

export const Reviews = () => {
  const mayReview = useScope(REVIEW_SCOPE)
  const [limit] = useState(() => pageSizeOf(location.search))

  useTitle("Reviews")

  return (
    <>
      <h1 tabIndex={-1}>Reviews</h1>
      {mayReview ? (
        <>
          <p class="muted">
            Domains no source lists that your team's validations met. Approve one as an institution and it counts for
            your target groups and offers at once; reject one and it stays out.
          </p>
          <Queue limit={limit} />
          <AuditTrail />
        </>
      ) : (
        <NoReviewScope />
      )}
    </>
  )
}
