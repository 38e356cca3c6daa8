/**
 * agentd's signature on push notifications: an Ed25519 key made from a 32-byte seed kept in the secret store
 * (`sharedSecret`, so every instance and the next start sign with the same key), its public half served as a JWKS
 * at `GET /.well-known/jwks.json`. A notification's JWT (`Authorization: Bearer`, EdDSA, `kid` the key's RFC 7638
 * thumbprint) carries `iss`, `aud` (the receiver's URL), `iat`, `exp` (5 minutes), `jti` (the delivery's id: the
 * same on every attempt), `taskId` and `request_body_sha256` (hex), so a receiver can check the body it got.
 */
import { createHash, createPrivateKey, createPublicKey, type KeyObject } from 'node:crypto';
import { calculateJwkThumbprint, exportJWK, SignJWT, type JWK } from 'jose';

/** PKCS#8 DER of an Ed25519 private key before its 32-byte seed (RFC 8410). */
const ED25519_PKCS8_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');
const LIFETIME_S = 300;

export interface PushClaims {
  issuer: string;
  audience: string;
  taskId: string;
  deliveryId: string;
  body: string;
}

export interface PushSigner {
  jwks(): { keys: Record<string, unknown>[] };
  /** A JWT for one attempt at `at` (epoch ms). */
  sign(claims: PushClaims, at: number): Promise<string>;
}

export async function createPushSigner(seed: Buffer): Promise<PushSigner> {
  const privateKey: KeyObject = createPrivateKey({
    key: Buffer.concat([ED25519_PKCS8_PREFIX, seed]),
    format: 'der',
    type: 'pkcs8',
  });
  const publicJwk = await exportJWK(createPublicKey(privateKey));
  const kid = await calculateJwkThumbprint(publicJwk);
  const published: JWK = { ...publicJwk, kid, alg: 'EdDSA', use: 'sig' };
  return {
    jwks: () => ({ keys: [published] }),
    sign(claims, at) {
      const iat = Math.floor(at / 1000);
      return new SignJWT({
        taskId: claims.taskId,
        request_body_sha256: createHash('sha256').update(claims.body).digest('hex'),
      })
        .setProtectedHeader({ alg: 'EdDSA', kid, typ: 'JWT' })
        .setIssuer(claims.issuer)
        .setAudience(claims.audience)
        .setJti(claims.deliveryId)
        .setIssuedAt(iat)
        .setExpirationTime(iat + LIFETIME_S)
        .sign(privateKey);
    },
  };
}
