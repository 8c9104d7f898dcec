/** A worker tool's module: compiled to crunch.worker.js, loaded by the pool's worker. */
export const sum = ({ n }: { readonly n: number }): number => (n * (n - 1)) / 2
