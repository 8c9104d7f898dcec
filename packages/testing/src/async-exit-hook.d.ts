/** The part of async-exit-hook (no types of its own) that Postgres.ts uses. */
declare module "async-exit-hook" {
  const exitHook: {
    /** Stops handling `event` (`"exit"`, `"beforeExit"`, a signal): its hooks no longer run on it. */
    readonly unhookEvent: (event: string) => void
  }
  export default exitHook
}
