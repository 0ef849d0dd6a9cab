/**
 * Takes the comments out of a Lua source for shipping: every function bundle carries the scripts it
 * runs, and their comments were two thirds of their bytes (the HTTP bundle's cold import pays for
 * them). Code lines keep their indentation and order, so the generated module still reads as the
 * script does; lines left empty go. A lexer, not a pattern: `--` inside a string ("a--b", '[[--',
 * long strings `[==[ … ]==]`) is code. The `lua/` files keep their comments; they are the sources.
 */

/** Where a long bracket `[[` / `[=[` … opened at `at` closes (index after it), or -1 when it is none. */
function longBracketEnd(text: string, at: number): number {
  const open = /^\[(=*)\[/.exec(text.slice(at, at + 64));
  if (!open) return -1;
  const close = `]${open[1]}]`;
  const end = text.indexOf(close, at + open[0].length);
  if (end < 0) throw new Error(`unclosed long bracket at offset ${at}`);
  return end + close.length;
}

/** The index just past the quoted string opening at `at`. */
function quotedEnd(text: string, at: number): number {
  const quote = text[at];
  for (let i = at + 1; i < text.length; i++) {
    const c = text[i];
    if (c === "\\") i++;
    else if (c === quote) return i + 1;
    else if (c === "\n") break;
  }
  throw new Error(`unclosed string at offset ${at}`);
}

/**
 * The source without comments; a first line starting `#!` (Upstash's shebang) is kept as it is, and
 * so is a whole-line comment that `keep` matches (the generator's marks of where an include starts).
 */
export function stripLuaComments(source: string, keep?: RegExp): string {
  const shebang = /^#![^\n]*\n/.exec(source)?.[0] ?? "";
  const text = source.slice(shebang.length);
  let out = "";
  let i = 0;
  while (i < text.length) {
    const c = text[i] as string;
    if (c === '"' || c === "'") {
      const end = quotedEnd(text, i);
      out += text.slice(i, end);
      i = end;
    } else if (c === "[" && longBracketEnd(text, i) > 0) {
      const end = longBracketEnd(text, i);
      out += text.slice(i, end);
      i = end;
    } else if (c === "-" && text[i + 1] === "-") {
      const newline = text.indexOf("\n", i);
      const comment = text.slice(i, newline < 0 ? text.length : newline);
      const long = longBracketEnd(text, i + 2);
      if (long > 0) {
        // A space, so `a--[[x]]b` does not become one name.
        out += " ";
        i = long;
      } else {
        if (keep?.test(comment) && /(^|\n)[ \t]*$/.test(out)) out += comment;
        i = newline < 0 ? text.length : newline;
      }
    } else {
      out += c;
      i++;
    }
  }
  const lines = out
    .split("\n")
    .map((line) => line.trimEnd())
    .filter((line) => line.trim() !== "");
  return lines.length === 0 ? shebang : `${shebang}${lines.join("\n")}\n`;
}
