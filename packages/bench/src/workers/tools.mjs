// The worker functions of scenario W, plain JavaScript (no tsx compile in the worker), run by
// both sides: agentfx's pool (through its own entry) and the floor's hand-written entry.

/** Answers with its input: the cost of a round trip. */
export const echo = (args) => args

/** A synchronous loop that never yields: only terminating the worker stops it. */
export const spin = () => {
  while (true) {
    // never yields
  }
}
