/** The Offers screen: the team's offers with their effective status and window, a status filter and a search. */
import { useEffect, useState } from "preact/hooks"
import { listAll } from "../api.ts"
import type { EffectiveOfferStatus, Offer } from "../apiTypes.ts"
import { Badge, Link, Show } from "../components/common.tsx"
import { useSigned } from "../context.ts"
import { formatInstant } from "../data/format.ts"
import { filterOffers, type StatusFilter, windowText } from "../data/offers.ts"
import { useLoad } from "../hooks.ts"
import { hrefOf } from "../router.ts"

const STATUSES: ReadonlyArray<EffectiveOfferStatus> = ["active", "scheduled", "draft", "paused", "expired", "archived"]

export const Offers = () => {
  const { api } = useSigned()
  const [loaded] = useLoad(() => listAll<Offer>(api, "/api/v1/offers"), "offers")
  const [status, setStatus] = useState<StatusFilter>("all")
  const [query, setQuery] = useState("")

  useEffect(() => {
    document.title = "Offers · Campusgate console"
  }, [])

  return (
    <>
      <h1 tabIndex={-1}>Offers</h1>
      <form class="toolbar" aria-label="Filter the offers" onSubmit={(event) => event.preventDefault()}>
        <div class="field">
          <label for="offer-search">Search</label>
          <input
            id="offer-search"
            type="search"
            value={query}
            placeholder="id, name or description"
            onInput={(event) => setQuery(event.currentTarget.value)}
          />
        </div>
        <div class="field">
          <label for="offer-status">Status</label>
          <select
            id="offer-status"
            value={status}
            onChange={(event) => setStatus(event.currentTarget.value as StatusFilter)}
          >
            <option value="all">All statuses</option>
            {STATUSES.map((option) => (
              <option key={option} value={option}>
                {option}
              </option>
            ))}
          </select>
        </div>
      </form>
      <Show loaded={loaded} what="the offers">
        {(offers) => {
          const shown = filterOffers(offers, { status, query })
          return (
            <>
              <p class="muted" role="status" aria-live="polite">
                {shown.length} of {offers.length} offers
              </p>
              {shown.length === 0 ? null : (
                <div class="table-scroll">
                  <table class="offers">
                    <caption class="visually-hidden">Offers of your team</caption>
                    <thead>
                      <tr>
                        <th scope="col">Offer</th>
                        <th scope="col">Status</th>
                        <th scope="col">Window</th>
                        <th scope="col">Defined in</th>
                      </tr>
                    </thead>
                    <tbody>
                      {shown.map((offer) => (
                        <tr key={offer.id} data-offer={offer.id}>
                          <td>
                            <Link href={hrefOf({ screen: "offer", id: offer.id })}>{offer.name}</Link>
                            <div class="muted mono">{offer.id}</div>
                          </td>
                          <td>
                            <Badge status={offer.effectiveStatus} />
                          </td>
                          <td>{windowText(offer, formatInstant)}</td>
                          <td>{offer.source === "api" ? "API" : "config"}</td>
                        </tr>
                      ))}
                    </tbody>
                  </table>
                </div>
              )}
            </>
          )
        }}
      </Show>
    </>
  )
}
