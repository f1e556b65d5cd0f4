// Who must authorize again, and when: a user's access changed (role, deletion, revoked credentials) is announced on the
// domain's event bus, so every instance's open WebSockets and SSE streams of that user re-authorize at once.
import type { EventBus } from '../shared-state/events/bus.js';

export class AccessChanges {
  constructor(private readonly events: EventBus) {}

  /** Announces that `userId`'s access may have changed (on every instance, with Redis). */
  changed(userId: number): void {
    this.events.publish('accessChanged', userId);
  }

  /** Calls `listener` for every announced change from now on; returns its removal. */
  listen(listener: (userId: number) => void): () => void {
    const stream = this.events.subscribe('accessChanged');
    void (async () => {
      for await (const userId of stream) listener(userId);
    })();
    return () => void stream.return();
  }
}
