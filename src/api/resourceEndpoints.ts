/**
 * The five endpoints every resource group (offers, target groups) declares
 * alike: create (idempotent, 201 with `Location` and `ETag`), a paged list,
 * read (with `ETag`), change (a JSON merge patch, `If-Match`) and delete
 * (`If-Match`), each with its scope, its problems and its words in the
 * OpenAPI document. A group adds them, in the order the document lists
 * them, among its own endpoints.
 */
import * as Context from "effect/Context"
import * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpApiSchema from "effect/http-api/HttpApiSchema"
import * as OpenApi from "effect/http-api/OpenApi"
import * as Schema from "effect/Schema"
import type { Scope } from "../domain/ApiKey.ts"
import { RequiredScope } from "./Authorization.ts"
import { Idempotency, IdempotencyHeaders } from "./idempotency.ts"
import {
  Created,
  IfMatchHeaders,
  Page,
  patchPayload,
  readErrors,
  resourceCreateErrors,
  resourceWriteErrors,
  Versioned
} from "./resources.ts"

/** What the OpenAPI document says of an endpoint. */
export interface EndpointWords {
  readonly summary: string
  readonly description: string
}

/** `{ id }` in a resource's path, with the id the docs page's snippets use (one its create example makes). */
export const idParam = (example: string) => ({ id: Schema.String.annotate({ examples: [example] }) })

export interface ResourceDeclaration<
  Path extends `/${string}`,
  Resource extends Schema.Top,
  Create extends Schema.Top,
  Update extends Schema.Top,
  ListQuery extends Schema.Struct.Fields
> {
  /** The collection's path (`/offers`); an item is at `<path>/:id`. */
  readonly path: Path
  readonly scopes: { readonly read: Scope; readonly write: Scope }
  /** The resource as answered, and its list page's component name (`OfferPage`). */
  readonly resource: Resource
  readonly pageIdentifier: string
  readonly createRequest: Create
  readonly updateRequest: Update
  readonly listQuery: ListQuery
  readonly idParam: ReturnType<typeof idParam>
  /** The example a create answers, and the one a change answers (none: the resource's own). */
  readonly createdExample: Resource["Encoded"]
  readonly updatedExample?: Resource["Encoded"] | undefined
  readonly words: {
    readonly create: EndpointWords
    readonly list: EndpointWords
    readonly get: EndpointWords
    readonly update: EndpointWords
    readonly delete: EndpointWords
  }
}

// Annotating keeps a schema's type (its `Rebuild` is itself), which the generic signature cannot see.
const withExample = <S extends Schema.Top>(schema: S, example: S["Encoded"] | undefined): S =>
  example === undefined ? schema : (schema.pipe(Schema.annotateEncoded({ examples: [example] })) as S)

/** An endpoint's scope and its words in the OpenAPI document. */
const described = (scope: Scope, words: EndpointWords) =>
  Context.merge(Context.make(RequiredScope, scope), OpenApi.annotations(words))

/** The create, list, get, update and delete endpoints of a resource group. */
export const resourceEndpoints = <
  const Path extends `/${string}`,
  Resource extends Schema.Top,
  Create extends Schema.Top,
  Update extends Schema.Top,
  ListQuery extends Schema.Struct.Fields
>(
  declared: ResourceDeclaration<Path, Resource, Create, Update, ListQuery>
) => {
  const { path, scopes, resource, words } = declared
  const itemPath: `${Path}/:id` = `${path}/:id`
  return {
    create: HttpApiEndpoint.post("create", path, {
      headers: IdempotencyHeaders,
      payload: declared.createRequest,
      success: Created(withExample(resource, declared.createdExample)),
      error: resourceCreateErrors
    })
      .middleware(Idempotency)
      .annotateMerge(described(scopes.write, words.create)),
    list: HttpApiEndpoint.get("list", path, {
      query: declared.listQuery,
      success: Page(resource, declared.pageIdentifier),
      error: readErrors
    }).annotateMerge(described(scopes.read, words.list)),
    get: HttpApiEndpoint.get("get", itemPath, {
      params: declared.idParam,
      success: Versioned(resource),
      error: readErrors
    }).annotateMerge(described(scopes.read, words.get)),
    update: HttpApiEndpoint.patch("update", itemPath, {
      params: declared.idParam,
      headers: IfMatchHeaders,
      payload: patchPayload(declared.updateRequest),
      success: Versioned(withExample(resource, declared.updatedExample)),
      error: resourceWriteErrors
    }).annotateMerge(described(scopes.write, words.update)),
    delete: HttpApiEndpoint.delete("delete", itemPath, {
      params: declared.idParam,
      headers: IfMatchHeaders,
      success: HttpApiSchema.NoContent,
      error: resourceWriteErrors
    }).annotateMerge(described(scopes.write, words.delete))
  }
}
