// @ts-check
// What the inspector shows, as pure functions of what it knows (inspect.js renders them; test/unit/inspect-view.test.ts):
// which actor it opens on, and which of an actor's context it shows.

/**
 * An actor as far as these choices read it: its machine (the definition's id), whether it stopped, its state.
 * @typedef {{ parentId: string | undefined, definition: { id?: string } | undefined, snapshot: { value?: unknown, context?: unknown, input?: unknown } | undefined, stopped: boolean }} ViewedActor
 */

/** @param {ViewedActor | undefined} a @param {string} machine */
const isLive = (a, machine) => a !== undefined && !a.stopped && a.definition?.id === machine;

/**
 * The actor the page shows until a person picks one: the newest running turn; else the turn or session already
 * shown (a finished turn stays, to look back at); else a session, a busy one first; else the actor shown, else
 * the first actor without a parent (a tool server's connection).
 * @param {ReadonlyMap<string, ViewedActor>} actors  by id, oldest first
 * @param {string | undefined} shown
 * @returns {string | undefined}
 */
export function actorToOpen(actors, shown) {
  const ids = [...actors.keys()].reverse();
  const busyTurn = ids.find((id) => isLive(actors.get(id), 'turn'));
  if (busyTurn !== undefined) return busyTurn;
  const current = shown === undefined ? undefined : actors.get(shown);
  if (current?.definition?.id === 'turn' || isLive(current, 'session')) return shown;
  const sessions = ids.filter((id) => isLive(actors.get(id), 'session'));
  const session = sessions.find((id) => actors.get(id)?.snapshot?.value !== 'idle') ?? sessions[0];
  if (session !== undefined) return session;
  return current ? shown : [...actors.keys()].find((id) => !actors.get(id)?.parentId);
}

/** A function a machine is given, as a frame carries it (src/inspect/frames.ts: `{ type: <its name> }`). @param {unknown} v */
const isFunction = (v) =>
  typeof v === 'object' &&
  v !== null &&
  Object.keys(v).length === 1 &&
  typeof (/** @type {{ type?: unknown }} */ (v).type) === 'string';

/**
 * An actor's context as shown (its input when it has none): without the functions its machine is given (a tool
 * server's `now` and `random`: what it uses, not what it holds), whose names are returned apart.
 * @param {ViewedActor['snapshot']} snapshot
 * @returns {{ shown: unknown, hidden: string[] }}
 */
export function contextShown(snapshot) {
  const context = snapshot?.context ?? snapshot?.input ?? {};
  if (typeof context !== 'object' || context === null || Array.isArray(context)) return { shown: context, hidden: [] };
  const entries = Object.entries(context);
  const hidden = entries.filter(([, v]) => isFunction(v)).map(([k]) => k);
  return { shown: Object.fromEntries(entries.filter(([k]) => !hidden.includes(k))), hidden };
}
