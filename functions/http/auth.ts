/**
 * Bearer-token checks that leak nothing through timing: the presented token and every configured one
 * are hashed to SHA-256 first, so what gets compared always has the same length, and every configured
 * token is compared every time (no early exit on the first match or the first differing byte).
 */

const encoder = new TextEncoder();

async function sha256(text: string): Promise<Uint8Array> {
  return new Uint8Array(await crypto.subtle.digest("SHA-256", encoder.encode(text)));
}

/** Byte equality whose time depends only on the lengths, never on where the arrays differ. */
export function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  let difference = a.length ^ b.length;
  const length = Math.max(a.length, b.length);
  for (let i = 0; i < length; i++) difference |= (a[i] ?? 0) ^ (b[i] ?? 0);
  return difference === 0;
}

export interface Grant {
  admin: boolean;
}

/**
 * Builds the check of a presented token against the configured ones. Their digests are computed
 * once, on first use, and reused by every later request of the same (warm) function.
 */
export function tokenChecker(
  tokens: readonly { token: string; admin: boolean }[],
): (presented: string) => Promise<Grant | undefined> {
  let known: Promise<{ digest: Uint8Array; admin: boolean }[]> | undefined;
  return async (presented) => {
    known ??= Promise.all(tokens.map(async ({ token, admin }) => ({ digest: await sha256(token), admin })));
    const digest = await sha256(presented);
    let matched = false;
    let admin = false;
    for (const entry of await known) {
      const same = sameBytes(digest, entry.digest);
      matched ||= same;
      admin ||= same && entry.admin;
    }
    return matched ? { admin } : undefined;
  };
}

/** The token of an `Authorization: Bearer <token>` header (scheme case-insensitive), if any. */
export function bearerToken(header: string | undefined): string | undefined {
  const match = /^bearer +(\S+) *$/i.exec(header ?? "");
  return match?.[1];
}
