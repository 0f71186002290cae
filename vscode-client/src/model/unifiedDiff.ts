/**
 * The proposed text of a file change, rebuilt from the editor's text and the unified diff the
 * server sent with the approval request (`RequestApprovalParams.diff`). The native diff
 * editor shows it as a virtual document beside the file.
 *
 * The diff was computed on the editor's text, so every context and removed line must match
 * it; `undefined` says it does not (the text changed meanwhile, or the diff was cut).
 */

/** One parsed hunk header: 1-based old start (0 when the old side is empty) and counts. */
interface Hunk {
  oldStart: number;
  oldLines: number;
  lines: string[];
}

const HEADER = /^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@/;

/** Lines that keep their `\n` (the last one may lack it), like the server's split. */
export function splitLines(text: string): string[] {
  const parts = text.split('\n');
  const lines = parts.slice(0, -1).map((part) => part + '\n');
  const last = parts[parts.length - 1];
  if (last !== undefined && last !== '') {
    lines.push(last);
  }
  return lines;
}

function parseHunks(unified: string): Hunk[] | undefined {
  const hunks: Hunk[] = [];
  let current: Hunk | undefined;
  for (const line of unified.split('\n')) {
    const header = HEADER.exec(line);
    if (header !== null) {
      current = { oldStart: Number(header[1]), oldLines: Number(header[2] ?? '1'), lines: [] };
      hunks.push(current);
    } else if (line.startsWith('[... diff cut')) {
      return undefined;
    } else if (current !== undefined && line !== '') {
      current.lines.push(line);
    }
  }
  return hunks;
}

function dropNewline(out: string[]): void {
  const last = out.length - 1;
  if (last >= 0 && out[last]?.endsWith('\n')) {
    out[last] = out[last].slice(0, -1);
  }
}

/** `oldText` with the diff applied, or `undefined` when the diff does not fit it. */
export function applyUnifiedDiff(oldText: string, unified: string): string | undefined {
  const hunks = parseHunks(unified);
  if (hunks === undefined) {
    return undefined;
  }
  const old = splitLines(oldText);
  const out: string[] = [];
  let cursor = 0; // index into `old` of the next line not yet copied
  for (const hunk of hunks) {
    const start = hunk.oldLines === 0 ? hunk.oldStart : hunk.oldStart - 1;
    if (start < cursor || start > old.length) {
      return undefined;
    }
    out.push(...old.slice(cursor, start));
    cursor = start;
    let previous = '';
    for (const line of hunk.lines) {
      const mark = line[0];
      const body = line.slice(1);
      if (mark === '\\') {
        // "\ No newline at end of file": the line before it has no newline.
        if (previous === '+' || previous === ' ') {
          dropNewline(out);
        }
        continue;
      }
      const withNewline = body + '\n';
      if (mark === ' ' || mark === '-') {
        const actual = old[cursor];
        if (actual === undefined || (actual !== withNewline && actual !== body)) {
          return undefined;
        }
        if (mark === ' ') {
          out.push(actual);
        }
        cursor += 1;
      } else if (mark === '+') {
        out.push(withNewline);
      } else {
        return undefined;
      }
      previous = mark;
    }
  }
  out.push(...old.slice(cursor));
  return out.join('');
}
