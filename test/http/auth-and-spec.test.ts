/** The token comparison (correctness; timing is a property of the code, not something to measure) and the OpenAPI document. */
import { describe, expect, it } from "vitest";
import { bearerToken, sameBytes, tokenChecker } from "../../functions/http/auth.ts";
import { openApiDocument } from "../../functions/http/index.ts";
import { makeApi } from "../support/http-app.ts";
import { sharedRedis } from "../support/stack.ts";

describe("constant-time comparison", () => {
  it("says equal only for equal secrets, whatever their lengths or contents", async () => {
    // The token check compares digests: a secret matches a configured token only when it equals it.
    const secretsEqual = async (a: string, b: string) =>
      (await tokenChecker([{ token: a, admin: false }])(b)) !== undefined;
    expect(await secretsEqual("s3cret-token", "s3cret-token")).toBe(true);
    expect(await secretsEqual("s3cret-token", "s3cret-tokeN")).toBe(false);
    expect(await secretsEqual("s3cret-token", "s3cret-token-longer")).toBe(false);
    expect(await secretsEqual("s3cret", "s3cre")).toBe(false);
    expect(await secretsEqual("ключ-🔑", "ключ-🔑")).toBe(true);
    expect(await secretsEqual("ключ-🔑", "ключ-🔒")).toBe(false);
  });

  it("compares bytes of any lengths without stopping early", () => {
    const bytes = (...values: number[]) => new Uint8Array(values);
    expect(sameBytes(bytes(1, 2, 3), bytes(1, 2, 3))).toBe(true);
    expect(sameBytes(bytes(1, 2, 3), bytes(1, 2, 4))).toBe(false);
    expect(sameBytes(bytes(1, 2, 3), bytes(1, 2))).toBe(false);
    expect(sameBytes(bytes(0), bytes())).toBe(false);
    expect(sameBytes(bytes(), bytes())).toBe(true);
  });

  it("finds the presented token among the configured ones and says whether it is an admin's", async () => {
    const check = tokenChecker([
      { token: "user-a", admin: false },
      { token: "root-b", admin: true },
    ]);
    expect(await check("user-a")).toEqual({ admin: false });
    expect(await check("root-b")).toEqual({ admin: true });
    expect(await check("user-")).toBeUndefined();
    expect(await check("")).toBeUndefined();
  });

  it("reads the token of a Bearer header only", () => {
    expect(bearerToken("Bearer abc.def")).toBe("abc.def");
    expect(bearerToken("bearer   abc")).toBe("abc");
    expect(bearerToken("Bearer")).toBeUndefined();
    expect(bearerToken("Bearer a b")).toBeUndefined();
    expect(bearerToken("Basic abc")).toBeUndefined();
    expect(bearerToken(undefined)).toBeUndefined();
  });

  it("refuses an app without tokens or with blank ones", () => {
    expect(() => makeApi({ tokens: [] })).toThrow(/at least one token/);
    expect(() => makeApi({ tokens: [" padded "] })).toThrow(/non-empty/);
    expect(() => makeApi({ tokens: [{ token: "" }] })).toThrow(/non-empty/);
    expect(() => makeApi({ redis: sharedRedis(), maxBodyBytes: 0 })).toThrow(/maxBodyBytes/);
  });
});

describe("GET /openapi.json", () => {
  it("is public, OpenAPI 3.1, and describes every route the app serves, and only those", async () => {
    const { app, call } = makeApi();
    const answer = await call("GET", "/openapi.json", { token: null });
    expect(answer.status).toBe(200);
    const document = openApiDocument();
    expect(answer.body).toEqual(JSON.parse(JSON.stringify(document)));

    const served = new Set(
      app.routes
        .filter((route) => route.method !== "ALL")
        .map((route) => `${route.method} ${route.path.replace(/:(\w+)/g, "{$1}")}`),
    );
    const documented = new Set(
      Object.entries(document.paths ?? {}).flatMap(([path, item]) =>
        Object.keys(item)
          .filter((key) => key !== "parameters")
          .map((method) => `${method.toUpperCase()} ${path}`),
      ),
    );
    expect([...documented].sort()).toEqual([...served].sort());
    expect(served.size).toBe(18);
  });

  it("documents auth and the error shape on every protected operation", () => {
    const doc = openApiDocument() as unknown as {
      security: unknown[];
      components: { securitySchemes: Record<string, { scheme: string }>; schemas: Record<string, unknown> };
      paths: Record<string, Record<string, { responses?: Record<string, unknown>; security?: unknown[] }>>;
    };
    expect(doc.components.securitySchemes.token?.scheme).toBe("bearer");
    expect(doc.components.securitySchemes.adminToken?.scheme).toBe("bearer");
    expect(doc.security).toEqual([{ token: [] }]);
    expect(JSON.stringify(doc.components.schemas.InternalError)).toContain('"field"');
    for (const [path, item] of Object.entries(doc.paths)) {
      for (const [method, operation] of Object.entries(item)) {
        if (method === "parameters" || path === "/openapi.json") continue;
        expect(Object.keys(operation.responses ?? {}), `${method} ${path}`).toEqual(
          expect.arrayContaining(["400", "401", "405", "500"]),
        );
      }
    }
  });
});
