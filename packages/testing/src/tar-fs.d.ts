/** The part of tar-fs (no types of its own) that Chromium.ts uses. */
declare module "tar-fs" {
  /** A stream that extracts the tar archive written to it into `cwd`. */
  export function extract(cwd: string): NodeJS.WritableStream
}
