/**
 * `campusgate/client`: the HTTP clients of the daemon, both from the one
 * contract (`api/`). `createCampusgateClient` answers Promises, for any
 * TypeScript or JavaScript app; `makeCampusgateClient` answers Effects, for
 * apps built with Effect. Problems are the contract's problem classes in
 * both.
 */
export * from "./api/client.ts"
export {
  CampusgateClientError,
  type CampusgatePromiseClient,
  createCampusgateClient,
  type JobBody,
  type JobView,
  type OfferResource,
  type PromiseClientOptions,
  type ResultRow,
  type ResultsPage,
  type RetryOptions,
  type SendOptions,
  type StreamedJob,
  type TargetGroupResource,
  type Versioned,
  type WaitForJobOptions,
  type WriteOptions
} from "./api/promiseClient.ts"
