/** Why a tool server's OAuth sign-in cannot go on: each a reason for a person, never a token or a secret. */

/** The connection attempt needs a person to sign in (the machine stops retrying until the callback restarts it). */
export class AuthorizationRequired extends Error {
  override readonly name = 'AuthorizationRequired';
  constructor(
    readonly serverId: string,
    principal?: string,
  ) {
    super(
      principal === undefined
        ? "authorization required: an admin signs in at the authorizationUrl of this server's record"
        : `authorization required: ${principal === '' ? 'this principal' : `principal "${principal}"`} is not signed in to this server; each principal signs in for itself at POST /api/mcp/servers/${encodeURIComponent(serverId)}/sign-in (or in the console)`,
    );
  }
}

/** `oauth.maxSignIns` sign-ins in a row did not satisfy the server: no further one is offered until a restart. */
export class SignInRefused extends Error {
  override readonly name = 'SignInRefused';
  constructor(signIns: number, scope: string | undefined, principal?: string) {
    const until =
      principal === undefined ? 'the server is restarted' : 'the principal asks for one again (POST …/sign-in)';
    super(
      `the server still refuses access after ${signIns} sign-in${signIns === 1 ? '' : 's'} in a row${scope ? ` (it asks for scope "${scope}")` : ''}: no further sign-in is offered until ${until}`,
    );
  }
}

/** The callback's state names no pending sign-in of the server (expired, used, or replaced). */
export class UnknownSignIn extends Error {
  override readonly name = 'UnknownSignIn';
  constructor() {
    super('No sign-in is pending with this state (it expired, was used, or was replaced)');
  }
}

/**
 * A principal's sign-in completed without the binding value of the caller that began it: another browser (a link
 * passed on) or none. Nothing is exchanged or stored; the sign-in stays pending for its own principal.
 */
export class UnboundSignIn extends Error {
  override readonly name = 'UnboundSignIn';
  constructor(readonly principal: string) {
    super(
      `This sign-in was begun by ${principalName(principal)} in another browser: only the browser that began it (POST …/sign-in, or "Sign in as me" in the console) can complete it. Nothing was stored; sign in from agentd yourself.`,
    );
  }
}

/** How a page or message names a principal (`''`: the unnamed one of the shorthand keys). */
export const principalName = (principal: string) =>
  principal === '' ? 'the unnamed principal' : `principal "${principal}"`;
