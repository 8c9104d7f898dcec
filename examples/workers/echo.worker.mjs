// A worker module in plain JavaScript: no tsx needed to load it.
export const echo = (args) => args

/** Never returns: only terminating the worker stops it. */
export const spin = () => {
  while (true) {
    // a synchronous loop that never yields
  }
}
