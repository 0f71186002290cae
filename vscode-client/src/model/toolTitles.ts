/**
 * Tool calls as a person reads them: "Read greeting.py", "Searched “def greet” — 3 files",
 * "Ran pytest -q". The tool ids and argument names stay in the card's details.
 */

/** Calls that only read (files, searches, the editor's state): grouped once they are done. */
const READ_ONLY = new Set([
  'read_file',
  'list_directory',
  'search_files',
  'find_files',
  'git_status',
  'read_tool_output',
  'terminal_output',
  'editor_diagnostics',
  'editor_symbols',
  'editor_definition',
  'editor_references',
  'editor_hover',
]);

/** Calls whose card would only repeat something the chat shows anyway (the plan card). */
const SHOWN_ELSEWHERE = new Set(['update_plan']);

/** Whether a tool only reads. */
export function isReadOnlyTool(toolId: string): boolean {
  return READ_ONLY.has(toolId);
}

/** Whether a tool's card is left out because another item already shows what it did. */
export function isShownElsewhere(toolId: string): boolean {
  return SHOWN_ELSEWHERE.has(toolId);
}

function text(value: unknown): string {
  if (typeof value === 'string') {
    return value;
  }
  if (Array.isArray(value)) {
    return value.map(text).join(' ');
  }
  return typeof value === 'number' || typeof value === 'boolean' ? String(value) : '';
}

/** The last segment of a path, so a 300 px card shows the name that matters. */
export function baseName(path: string): string {
  const trimmed = path.replace(/[\\/]+$/, '');
  const cut = Math.max(trimmed.lastIndexOf('/'), trimmed.lastIndexOf('\\'));
  return cut < 0 ? trimmed : trimmed.slice(cut + 1);
}

function quoted(value: string): string {
  const short = value.length > 40 ? `${value.slice(0, 39)}…` : value;
  return `“${short}”`;
}

/** What a call does, in a few words ("Read greeting.py"). */
export function toolTitle(toolId: string, input: Readonly<Record<string, unknown>>): string {
  const path = text(input.path);
  const file = path === '' ? '' : baseName(path);
  switch (toolId) {
    case 'read_file':
      return `Read ${file || 'a file'}`;
    case 'write_file':
      return `Write ${file || 'a file'}`;
    case 'edit_file':
      return `Edit ${file || 'a file'}`;
    case 'list_directory':
      return `Listed ${path === '' || path === '.' ? 'the workspace' : file}`;
    case 'search_files':
      return `Searched ${quoted(text(input.pattern))}`;
    case 'find_files':
      return `Looked for files ${quoted(text(input.pattern))}`;
    case 'run_command':
    case 'terminal_start':
      return `Ran ${text(input.command)}`.trim();
    case 'git_status':
      return 'Checked git status';
    case 'git_commit':
      return 'Commit';
    case 'http_request':
      return `Fetch ${text(input.url)}`.trim();
    case 'editor_diagnostics':
      return file === '' ? 'Checked the problems' : `Checked problems in ${file}`;
    case 'editor_symbols':
      return file === '' ? `Looked up symbols ${quoted(text(input.query))}` : `Outlined ${file}`;
    case 'delegate':
      return `Asked ${text(input.agent) || 'another agent'}`;
    case 'message_session':
      return 'Messaged another chat';
    default:
      return toolId.replace(/_/g, ' ');
  }
}

const PAST: Readonly<Record<string, string>> = {
  Write: 'Wrote',
  Edit: 'Edited',
  Commit: 'Committed',
  Fetch: 'Fetched',
};

/** The finished form of a title ("Edit x" → "Edited x") once the call succeeded. */
export function doneTitle(title: string): string {
  const verb = /^\w+/.exec(title)?.[0] ?? '';
  const past = PAST[verb];
  return past === undefined ? title : past + title.slice(verb.length);
}

const SEARCH_SUMMARY = /\[([\d,]+) match(?:es)? in ([\d,]+) files?/;
const FILES_SUMMARY = /\[([\d,]+) files? (?:with matches|matching)/;

function plural(count: string, noun: string): string {
  return `${count} ${noun}${count === '1' ? '' : 's'}`;
}

/** What a finished call's result comes to in a few words, when that can be told. */
export function resultNote(toolId: string, success: boolean, output: string): string | undefined {
  if (!success) {
    return undefined;
  }
  if (toolId === 'search_files' || toolId === 'find_files') {
    if (/^No (matches|files found)\./.test(output)) {
      return 'no matches';
    }
    const files = SEARCH_SUMMARY.exec(output)?.[2] ?? FILES_SUMMARY.exec(output)?.[1];
    return files === undefined ? undefined : plural(files, 'file');
  }
  return undefined;
}

/** One line for a group of finished read-only calls: "Read 2 files, searched 1 pattern". */
export function groupTitle(toolIds: readonly string[]): string {
  const counts = new Map<string, number>();
  for (const id of toolIds) {
    counts.set(id, (counts.get(id) ?? 0) + 1);
  }
  const parts: string[] = [];
  const say = (id: string, verb: string, noun: string): void => {
    const count = counts.get(id);
    if (count !== undefined) {
      parts.push(`${verb} ${count} ${noun}${count === 1 ? '' : 's'}`);
      counts.delete(id);
    }
  };
  say('read_file', 'read', 'file');
  say('search_files', 'searched', 'pattern');
  say('find_files', 'looked for', 'file pattern');
  say('list_directory', 'listed', 'folder');
  const rest = [...counts.values()].reduce((sum, count) => sum + count, 0);
  if (rest > 0) {
    parts.push(`${rest} more look${rest === 1 ? '' : 's'}`);
  }
  const line = parts.join(', ');
  return line.charAt(0).toUpperCase() + line.slice(1);
}
