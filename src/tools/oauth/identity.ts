/**
 * How agentd presents itself to an authorization server. The registration metadata names `application_type`
 * (`native` for a loopback redirect URL, `web` otherwise, none for machine-to-machine) and the auth method
 * (`client_secret_basic`, `private_key_jwt`, else `none`). `privateKeyJwt` signs one assertion per token request
 * (RFC 7523; `iss`/`sub` the client id, `aud` the issuer) with the key read at that moment; an unusable key fails the
 * request with a reason, never the key.
 */
import { createPrivateKey, type JsonWebKey } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import {
  createPrivateKeyJwtAuth,
  type AddClientAuthentication,
  type OAuthClientMetadata,
} from '@modelcontextprotocol/client';
import type { OAuthConfig } from '../../config/schema.ts';
import { isLoopbackHost } from './policy.ts';

/** The metadata of a registration (RFC 7591) for `redirectUrl`, or for a machine-to-machine client without one. */
export function clientMetadataOf(oauth: OAuthConfig, redirectUrl: string | undefined): OAuthClientMetadata {
  const interactive = redirectUrl !== undefined;
  const authMethod =
    oauth.clientSecret !== undefined
      ? 'client_secret_basic'
      : oauth.privateKey !== undefined || oauth.privateKeyFile !== undefined
        ? 'private_key_jwt'
        : 'none';
  return {
    client_name: 'agentd',
    redirect_uris: interactive ? [redirectUrl] : [],
    grant_types: interactive ? ['authorization_code', 'refresh_token'] : ['client_credentials'],
    response_types: interactive ? ['code'] : [],
    token_endpoint_auth_method: authMethod,
    ...(interactive && { application_type: isLoopbackHost(new URL(redirectUrl).hostname) ? 'native' : 'web' }),
    ...(oauth.scopes && { scope: oauth.scopes.join(' ') }),
  };
}

/** A private key agentd cannot sign with; its message says why, never the key. */
class UnusableKey extends Error {
  override readonly name = 'UnusableKey';
}

/** The JWS algorithm a private key signs with by default; UnusableKey when it signs none agentd knows. */
function algorithmOf(pem: string): string {
  const key = createPrivateKey(pem);
  const curve = key.asymmetricKeyDetails?.namedCurve;
  switch (key.asymmetricKeyType) {
    case 'rsa':
      return 'RS256';
    case 'rsa-pss':
      return 'PS256';
    case 'ed25519':
      return 'EdDSA';
    case 'ec':
      if (curve === 'prime256v1') return 'ES256';
      if (curve === 'secp384r1') return 'ES384';
      if (curve === 'secp521r1') return 'ES512';
  }
  throw new UnusableKey(
    `the private key's type (${key.asymmetricKeyType ?? 'unknown'}${curve ? ` ${curve}` : ''}) signs no JWS algorithm agentd knows`,
  );
}

/** The `private_key_jwt` client authentication of a config with a key, else `undefined`. */
export function privateKeyJwt(oauth: OAuthConfig): AddClientAuthentication | undefined {
  const { clientId, privateKey, privateKeyFile } = oauth;
  if (clientId === undefined || (privateKey === undefined && privateKeyFile === undefined)) return undefined;
  return async (headers, params, url, metadata) => {
    let jwk: JsonWebKey;
    let alg: string;
    try {
      const pem = privateKey ?? (await readFile(privateKeyFile!, 'utf8'));
      alg = oauth.signingAlgorithm ?? algorithmOf(pem);
      jwk = createPrivateKey(pem).export({ format: 'jwk' });
    } catch (err) {
      const why =
        (err as NodeJS.ErrnoException).code === 'ENOENT'
          ? `${privateKeyFile} does not exist`
          : err instanceof UnusableKey
            ? err.message
            : 'it is not a PKCS #8 PEM private key';
      throw new Error(`OAuth: the client's private key cannot be used: ${why}`);
    }
    params.set('client_id', clientId);
    await createPrivateKeyJwtAuth({ issuer: clientId, subject: clientId, privateKey: jwk, alg })(
      headers,
      params,
      url,
      metadata,
    );
  };
}
