/** The Offers screen: the team's offers with their effective status and window, a status filter and a search. */
import { useState } from "preact/hooks"
import { listAll } from "../api.ts"
import type { EffectiveOfferStatus, Offer } from "../apiTypes.ts"
import { Badge, Link, Options, Show, Table } from "../components/common.tsx"
import { useSigned } from "../context.ts"
import { formatInstant } from "../data/format.ts"
import { filterOffers, type StatusFilter, windowText } from "../data/offers.ts"
import { useLoad, useTitle } from "../hooks.ts"
import { hrefOf } from "../router.ts"

const STATUSES: ReadonlyArray<EffectiveOfferStatus> = ["active", "scheduled", "draft", "paused", "expired", "archived"]

/** The filter's choices: every status, named by itself, after all of them. */
const STATUS_CHOICES: ReadonlyArray<readonly [StatusFilter, string]> = [
  ["all", "All statuses"],
  ...STATUSES.map((status) => [status, status] as const)
]

export const Offers = () => {
  const { api } = useSigned()
  const [loaded] = useLoad(() => listAll<Offer>(api, "/api/v1/offers"), "offers")
  const [status, setStatus] = useState<StatusFilter>("all")
  const [query, setQuery] = useState("")

  useTitle("Offers")

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
            <Options choices={STATUS_CHOICES} />
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
                <Table
                  class="offers"
                  caption="Offers of your team"
                  columns={["Offer", "Status", "Window", "Defined in"]}
                >
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
                </Table>
              )}
            </>
          )
        }}
      </Show>
    </>
  )
}
