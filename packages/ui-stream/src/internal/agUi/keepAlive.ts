/**
 * An event stream with a comment every `interval` (`: keepalive`), until the stream ends: a
 * connection that carries nothing for a while (a tool that takes long, a replay that waits for
 * the run's next event) is not closed by a proxy or a load balancer on the way.
 */
import type { Duration } from "effect"
import { Stream } from "effect"
import { keepAlive } from "../../AgUiEvent.js"

export const keepingAlive = (interval: Duration.Input) => (events: Stream.Stream<Uint8Array>): Stream.Stream<Uint8Array> =>
  Stream.merge(events, Stream.tick(interval).pipe(Stream.drop(1), Stream.as(keepAlive)), { haltStrategy: "left" })
