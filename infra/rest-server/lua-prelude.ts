/**
 * The text Redis runs in place of a client's script: a one-line prelude shadowing `redis` with a local
 * table whose `call`/`pcall` check each call first, and the script's own text after it, every line where
 * it was. Two checks can be on: declared keys (flagged scripts, `lua-key-check.ts`) and Upstash mode's
 * Redis 6.2 forms (every script, the table of `redis62.ts`). A refused call fails as Redis's own
 * `redis.call` error would (`redis.pcall` returns it as an error table). The prelude runs no
 * `redis.call` of its own, so billing is unchanged.
 */
import { keyCheckLua, type Shebang } from "./lua-key-check.ts";
import { REDIS62_CONTAINERS, REDIS62_RULES, type Redis62Rule, refusalText } from "./redis62.ts";

export interface CheckOptions {
  /** A key-positions literal from `positionsTable`: check keys against KEYS. Null: no key check. */
  readonly keyPositions: string | null;
  /** Check each call against Redis 6.2's forms. */
  readonly redis62: boolean;
  /**
   * Cluster mode: line 1 becomes a `#!lua` shebang, so Redis 7 refuses a script that touches a key of
   * a second hash slot ("Script attempted to access keys that do not hash to the same slot"), a check
   * it skips for scripts without one (for compatibility). Optional, default false.
   */
  readonly slotShebang?: boolean;
}

function luaString(text: string): string {
  return `"${text.replaceAll("\\", "\\\\").replaceAll('"', '\\"')}"`;
}

/**
 * One rule as a Lua string constant, `<spec>|<refusal>`, which costs nothing to build per run: spec `c`
 * new, `n<max>` max-args, `w<from> WORD…` words, `x` xadd-id.
 */
function luaRule(rule: Redis62Rule): string {
  const { check } = rule;
  const spec =
    check.kind === "new"
      ? "c"
      : check.kind === "max-args"
        ? `n${check.max}`
        : check.kind === "words"
          ? `w${check.from} ${check.words.join(" ")}`
          : "x";
  return luaString(`${spec}|${refusalText(rule)}`);
}

/**
 * Defines `vchk(name, ...)`: the refusal text for a 7.0-only form, or nil. `rule` parses a rule the
 * first time a run meets its command. `select(i, ...)` is argv[i]. The whole table is embedded, whatever the
 * script names, since a command may be named at run time.
 */
const REDIS62_LUA = [
  `local V = {${[
    ...[...REDIS62_CONTAINERS].map((name) => `[${luaString(name)}]="C"`),
    ...REDIS62_RULES.map((rule) => `[${luaString(rule.command)}]=${luaRule(rule)}`),
  ].join(",")}}`,
  // Per run: parsed rules, and lower / upper case of the strings met (names and options repeat); no
  // word to look for is a number, so `up` leaves numbers out.
  "local R, L, U = {}, {}, {}",
  "local function low(s) local v = L[s] if v == nil then v = string.lower(s) L[s] = v end return v end",
  "local function up(s) if type(s) ~= 'string' then return '' end",
  "local v = U[s] if v == nil then v = string.upper(s) U[s] = v end return v end",
  "local function rule(key) local v = R[key] if v ~= nil then return v end v = V[key]",
  "if v == nil or v == 'C' then return v end local bar = string.find(v, '|', 1, true)",
  "local spec = string.sub(v, 1, bar - 1)",
  "local p = {string.sub(spec, 1, 1), tonumber(string.match(spec, '^%a(%d+)')) or 0, m = string.sub(v, bar + 1)}",
  "for w in string.gmatch(string.sub(spec, 2), '%a+') do p[#p + 1] = w end R[key] = p return p end",
  "local function vchk(n, ...)",
  "if type(n) ~= 'string' then return nil end",
  "local name = low(n) local v = rule(name)",
  "if v == nil then return nil end",
  "if v == 'C' then local s = ... if type(s) ~= 'string' then return nil end",
  "v = rule(name .. '|' .. low(s)) if v == nil then return nil end end",
  "local k, c = v[1], select('#', ...) + 1",
  "if k == 'c' then return v.m end",
  "if k == 'n' then if c > v[2] then return v.m end return nil end",
  "if k == 'w' then for j = 3, #v do local hit = false",
  "for i = v[2], c - 1 do if up((select(i, ...))) == v[j] then hit = true break end end",
  "if not hit then return nil end end return v.m end",
  "local i = 2 while i < c do local w = up((select(i, ...)))",
  "if w == 'NOMKSTREAM' then i = i + 1 elseif w == 'MAXLEN' or w == 'MINID' then i = i + 1",
  "local o = select(i, ...) if o == '=' or o == '~' then i = i + 1 end i = i + 1",
  "if i < c and up((select(i, ...))) == 'LIMIT' then i = i + 2 end else break end end",
  "local id = i < c and select(i, ...)",
  "if id ~= '*' and type(id) == 'string' and string.match(id, '^%d+%-%*$') then return v.m end",
  "return nil end",
].join(" ");

/*
 * `redis.call` is a `coroutine.wrap` function, a C function, running the loop `run`: each resume checks
 * and runs one call with the real `redis.pcall` and yields its reply. A refused or failed call raises
 * the error table out of the coroutine, and the C function raises it again in the caller. Because the
 * caller called a C function, its frame is still there even after a tail call (`return
 * redis.call(…)`), so Redis names the caller's line, as for its own `redis.call`. The raise ends the
 * coroutine, and the next `redis.call` lookup makes a new one. (A script that kept `redis.call` in a
 * local and goes on after catching its error with `pcall` gets "cannot resume dead coroutine".)
 */
const WRAPPER = [
  "local S local function step(...) local e = chk(...) local res",
  "if e then res = {err = e} else res = r.pcall(...) end",
  "if type(res) == 'table' and res.err ~= nil then rawset(S, 'call', nil) error(res) end return res end",
  "local function run(...) local res = step(...) while true do res = step(coroutine.yield(res)) end end",
  "S = setmetatable({",
  "pcall = function(...) local e = chk(...) if e then return {err = e} end return r.pcall(...) end,",
  "}, {__index = function(t, k) if k ~= 'call' then return r[k] end",
  "local w = coroutine.wrap(run) rawset(t, 'call', w) return w end})",
  "return S end)(redis, KEYS);",
].join(" ");

/** The one-line prelude for `options`, or "" when nothing is checked. */
export function prelude(options: CheckOptions): string {
  const parts: string[] = [];
  const checks: string[] = [];
  if (options.redis62) {
    parts.push(REDIS62_LUA);
    checks.push("local e = vchk(...) if e then return e end");
  }
  if (options.keyPositions !== null) {
    parts.push(keyCheckLua(options.keyPositions));
    checks.push("return kchk(...)");
  }
  if (parts.length === 0) return "";
  return [
    "local redis = (function(r, K)",
    ...parts,
    `local function chk(...) ${checks.join(" ")} end`,
    WRAPPER,
  ].join(" ");
}

/**
 * The source Redis runs for `source`, lines unchanged. A flagged script (`shebang` set) loses the flag:
 * with no other flags, the shebang becomes a comment after the prelude on line 1; with other flags (Redis
 * 7 knows no-writes, allow-oom…), line 1 keeps them in a shebang and the prelude goes in front of line
 * 2. An unflagged script gets the prelude in front of its line 1.
 */
export function rewriteScript(source: string, shebang: Shebang | null, options: CheckOptions): string {
  const text = prelude(options);
  if (!shebang)
    return options.slotShebang ? withSlotShebang(source, text) : text === "" ? source : `${text} ${source}`;
  if (shebang.otherFlags.length === 0 && !options.slotShebang)
    return `${text} --${shebang.line}${shebang.rest}`;
  const kept = shebang.otherFlags.length === 0 ? "#!lua" : `#!lua flags=${shebang.otherFlags.join(",")}`;
  if (!text) return `${kept}${shebang.rest}`;
  return shebang.rest === "" ? `${kept}\n${text}` : `${kept}\n${text} ${shebang.rest.slice(1)}`;
}

/**
 * An unflagged script with a `#!lua` line 1 (`slotShebang`): a line 1 that is a plain comment (as the
 * generated scripts' is) gives way to it, keeping every other line where it was; otherwise the
 * script moves down one line. A script with a shebang of its own keeps it.
 */
function withSlotShebang(source: string, text: string): string {
  if (source.startsWith("#!")) return source;
  const end = source.indexOf("\n");
  const first = end < 0 ? source : source.slice(0, end);
  const body = /^--(?!\[=*\[)/.test(first) ? (end < 0 ? "" : source.slice(end + 1)) : source;
  return `#!lua\n${text === "" ? "" : `${text} `}${body}`;
}
