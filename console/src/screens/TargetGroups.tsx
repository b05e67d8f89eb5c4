/**
 * The Target groups screen: each group the team sees (its own and the
 * shared ones) with its criteria in plain words, and "try an email": the
 * verdict for one address with the explanation per criterion (format,
 * domain, geography, organisation type, custom list, email policy) and
 * the institution found, as `POST /validate/target-group` with
 * `explain: true` answers them.
 */
import { useEffect, useRef, useState } from "preact/hooks"
import { listAll } from "../api.ts"
import type { TargetGroup, Validation } from "../apiTypes.ts"
import { Badge, ErrorNote, Show } from "../components/common.tsx"
import { useScope, useSigned } from "../context.ts"
import { countryName, describeCriteria } from "../data/criteria.ts"
import { useLoad } from "../hooks.ts"

/** One criterion's outcome as the daemon explains it. */
interface ExplanationEntry {
  readonly criterion: string
  readonly outcome: "pass" | "fail" | "not-applicable"
  readonly detail: string
}

type Institution = NonNullable<Validation["validationDetails"]["domain"]["institution"]>

type Explained = Validation & {
  readonly explanation?:
    | ReadonlyArray<ExplanationEntry>
    | { readonly criteria: ReadonlyArray<ExplanationEntry>; readonly institution?: Institution | null }
}

const CRITERION_NAMES: Record<string, string> = {
  format: "Format",
  domain: "Domain",
  geography: "Geography",
  organisationType: "Organisation type",
  organizationType: "Organisation type",
  customList: "Custom list",
  emailPolicy: "Email policy"
}

const OUTCOME_WORDS: Record<string, string> = { pass: "passed", fail: "failed", "not-applicable": "not applicable" }

const entriesOf = (result: Explained): ReadonlyArray<ExplanationEntry> => {
  const explanation = result.explanation
  if (Array.isArray(explanation)) return explanation
  if (explanation !== undefined && "criteria" in explanation) return explanation.criteria
  // A daemon that does not explain: the statuses of the result's own details.
  return Object.entries(result.validationDetails).map(([criterion, detail]) => ({
    criterion,
    outcome: detail.status === "passed" ? "pass" : detail.status === "failed" ? "fail" : "not-applicable",
    detail: ""
  }))
}

const institutionOf = (result: Explained): Institution | undefined => {
  const explanation = result.explanation
  if (explanation !== undefined && !Array.isArray(explanation) && "institution" in explanation)
    return explanation.institution ?? undefined
  return result.validationDetails.domain.institution
}

const Verdict = (props: { readonly result: Explained }) => {
  const { result } = props
  const institution = institutionOf(result)
  return (
    <div class="verdict" data-valid={String(result.isValid)}>
      <p class="verdict-line">
        <Badge status={result.isValid ? "eligible" : "ineligible"} /> <span class="mono">{result.email}</span> for{" "}
        {result.targetGroup.name}
        {result.reasonCode === undefined ? null : (
          <>
            : {result.reason} <span class="mono muted">({result.reasonCode})</span>
          </>
        )}
      </p>
      <div class="table-scroll">
        <table class="explanation">
          <caption>Criterion by criterion</caption>
          <thead>
            <tr>
              <th scope="col">Criterion</th>
              <th scope="col">Outcome</th>
              <th scope="col">Why</th>
            </tr>
          </thead>
          <tbody>
            {entriesOf(result).map((entry) => (
              <tr key={entry.criterion} data-criterion={entry.criterion} data-outcome={entry.outcome}>
                <th scope="row">{CRITERION_NAMES[entry.criterion] ?? entry.criterion}</th>
                <td>
                  <Badge status={OUTCOME_WORDS[entry.outcome] ?? entry.outcome} />
                </td>
                <td>{entry.detail}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <h3>Institution found</h3>
      {institution === undefined ? (
        <p class="note" data-institution="none">
          No institution:{" "}
          {result.matchedDomain === undefined
            ? "the domain matched none."
            : `${result.matchedDomain} is not a listed institution.`}
        </p>
      ) : (
        <dl class="facts" data-institution={institution.id}>
          <div>
            <dt>Name</dt>
            <dd>{institution.name ?? "(no name in the data)"}</dd>
          </div>
          <div>
            <dt>Domain</dt>
            <dd class="mono">{institution.id}</dd>
          </div>
          <div>
            <dt>Country</dt>
            <dd>{institution.country === null ? "unknown" : countryName(institution.country)}</dd>
          </div>
          <div>
            <dt>Type</dt>
            <dd>{institution.type}</dd>
          </div>
          {institution.region === null ? null : (
            <div>
              <dt>Region</dt>
              <dd>{institution.region}</dd>
            </div>
          )}
        </dl>
      )}
    </div>
  )
}

const TryEmail = (props: { readonly groups: ReadonlyArray<TargetGroup> }) => {
  const { api } = useSigned()
  const email = useRef<HTMLInputElement>(null)
  const [group, setGroup] = useState(props.groups[0]?.id ?? "")
  const [busy, setBusy] = useState(false)
  const [result, setResult] = useState<Explained | undefined>(undefined)
  const [error, setError] = useState<Error | undefined>(undefined)

  const submit = async (event: Event) => {
    event.preventDefault()
    const address = email.current?.value.trim() ?? ""
    if (address === "" || group === "") return
    setBusy(true)
    setError(undefined)
    try {
      setResult(
        await api.request<Explained>("/api/v1/validate/target-group", {
          method: "POST",
          json: { email: address, targetGroupId: group, explain: true }
        })
      )
    } catch (failure) {
      setResult(undefined)
      setError(failure as Error)
    } finally {
      setBusy(false)
    }
  }

  return (
    <section aria-labelledby="try-heading" class="panel">
      <h2 id="try-heading">Try an email</h2>
      <form class="toolbar" onSubmit={submit}>
        <div class="field grow">
          <label for="try-email">Email</label>
          <input id="try-email" ref={email} type="email" autocomplete="off" spellcheck={false} required />
        </div>
        <div class="field">
          <label for="try-group">Target group</label>
          <select id="try-group" value={group} onChange={(event) => setGroup(event.currentTarget.value)}>
            {props.groups.map((option) => (
              <option key={option.id} value={option.id}>
                {option.name}
              </option>
            ))}
          </select>
        </div>
        <button type="submit" class="primary" disabled={busy}>
          {busy ? "Checking…" : "Try"}
        </button>
      </form>
      <div aria-live="polite">
        {error === undefined ? null : <ErrorNote error={error} />}
        {result === undefined ? null : <Verdict result={result} />}
      </div>
    </section>
  )
}

export const TargetGroups = () => {
  const { api } = useSigned()
  const mayTry = useScope("validate:target-groups")
  const [loaded] = useLoad(() => listAll<TargetGroup>(api, "/api/v1/target-groups"), "target-groups")

  useEffect(() => {
    document.title = "Target groups · Campusgate console"
  }, [])

  return (
    <>
      <h1 tabIndex={-1}>Target groups</h1>
      <Show loaded={loaded} what="the target groups">
        {(groups) => (
          <>
            {mayTry && groups.length > 0 ? <TryEmail groups={groups} /> : null}
            <ul class="cards">
              {groups.map((group) => (
                <li key={group.id} class="card" data-target-group={group.id}>
                  <h2>{group.name}</h2>
                  <p class="muted">
                    <span class="mono">{group.id}</span> · {group.team === undefined ? "shared" : `team ${group.team}`}{" "}
                    · {group.source === "api" ? "made through the API" : "in the config directory"}
                  </p>
                  {group.description === undefined ? null : <p>{group.description}</p>}
                  <dl class="criteria">
                    {describeCriteria(group.criteria).map((line) => (
                      <div key={line.criterion}>
                        <dt>{line.label}</dt>
                        <dd>{line.text}</dd>
                      </div>
                    ))}
                  </dl>
                </li>
              ))}
            </ul>
          </>
        )}
      </Show>
    </>
  )
}
