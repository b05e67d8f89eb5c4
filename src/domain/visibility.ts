/**
 * The team rule, the one place it is written: a team sees its own offers
 * and target groups plus the shared target groups (no team); anything else
 * does not exist for it; what a team owns alone (an offer, a verification,
 * a bulk job) exists for that team only. The HTTP API answers 404 for what a caller cannot
 * see (never 403, so other teams' ids cannot be probed), and an offer may
 * use exactly the target groups its team sees. The library and the CLI act
 * for the operator and see everything (`ALL_TEAMS`).
 */
import type { Offer } from "./Offer.ts"
import type { TargetGroup } from "./TargetGroup.ts"

/** The viewer that sees every resource. */
export const ALL_TEAMS: unique symbol = Symbol("campusgate/all-teams")

/** Whose resources a caller may see: a team id, or every team. */
export type Viewer = string | typeof ALL_TEAMS

/** A target group is visible to a team when it is shared (no team) or the team's own. */
export const targetGroupVisible = (group: Pick<TargetGroup, "team">, viewer: Viewer): boolean =>
  viewer === ALL_TEAMS || group.team === undefined || group.team === viewer

/** What one team owns (an offer, a verification, a job) is visible to that team only. */
const ownTeamOnly = (owned: { readonly team: string }, viewer: Viewer): boolean =>
  viewer === ALL_TEAMS || owned.team === viewer

/** An offer is visible to its own team only. */
export const offerVisible: (offer: Pick<Offer, "team">, viewer: Viewer) => boolean = ownTeamOnly

/** A verification is visible to its own team only (its offer's team, or the team that started it). */
export const verificationVisible: (verification: { readonly team: string }, viewer: Viewer) => boolean = ownTeamOnly

/** A bulk job is visible to the team that submitted it only. */
export const jobVisible: (job: { readonly team: string }, viewer: Viewer) => boolean = ownTeamOnly

/** A problem of a rejected configuration change is shown to the team it concerns; one of no team, to every team. */
export const problemVisible = (problem: { readonly team?: string | undefined }, viewer: Viewer): boolean =>
  viewer === ALL_TEAMS || problem.team === undefined || problem.team === viewer
