/**
 * The `campusgate` subcommands, each loaded from its module by name: a run
 * loads only the subcommand it names (`cli/main.ts`), so `campusgate serve`
 * does not load, say, the Redis and PostgreSQL clients `backup` and
 * `store accept-new` import, and `campusgate check` in a pre-commit hook
 * does not load the server. Help, the version, or a name none has load
 * every one.
 */
/** Each subcommand's name with its loader; the name is the one `Command.make` gives it (checked by a test). */
export const subcommands = {
  serve: async () => (await import("./commands/serve.ts")).serveCommand,
  check: async () => (await import("./commands/check.ts")).checkCommand,
  inspect: async () => (await import("./commands/inspect.ts")).inspectCommand,
  keys: async () => (await import("./commands/keys.ts")).keysCommand,
  clients: async () => (await import("./commands/clients.ts")).clientsCommand,
  review: async () => (await import("./commands/review.ts")).reviewCommand,
  outbox: async () => (await import("./commands/outbox.ts")).outboxCommand,
  schema: async () => (await import("./commands/schema.ts")).schemaCommand,
  data: async () => (await import("./commands/data.ts")).dataCommand,
  migrate: async () => (await import("./commands/migrate.ts")).migrateCommand,
  backup: async () => (await import("./commands/backup.ts")).backupCommand,
  restore: async () => (await import("./commands/backup.ts")).restoreCommand,
  store: async () => (await import("./commands/store.ts")).storeCommand
}

type Subcommand = Awaited<ReturnType<(typeof subcommands)[keyof typeof subcommands]>>

/** The subcommands a run with these arguments (after the executable) needs: the one it names, else all. */
export const subcommandsFor = (args: ReadonlyArray<string>): Promise<Array<Subcommand>> => {
  const name = args[0]
  const loaders: ReadonlyArray<() => Promise<Subcommand>> =
    name !== undefined && Object.hasOwn(subcommands, name)
      ? [subcommands[name as keyof typeof subcommands]]
      : Object.values(subcommands)
  return Promise.all(loaders.map((load) => load()))
}
