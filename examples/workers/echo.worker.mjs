// A worker module in plain JavaScript: no tsx needed to load it.
export const echo = (args) => args
