/**
 * Context attached to a message (a selection, a file): how it travels and how it comes back.
 *
 * An attachment is sent as an extra text part of the user message (`sendMessage.attachments`),
 * so the model reads it and the transcript stores it. Its first line is a fixed header the
 * view recognises when the transcript is loaded again, so a reloaded message shows the same
 * chips instead of the attached code pasted into the bubble.
 */

import type { TextPart } from '../protocol';

/**
 * `selection` / `file`: their text travels with the message. `active`: only the name of the
 * file open in the editor (the implicit context; the agent reads it when it needs to).
 */
export type AttachmentKind = 'selection' | 'file' | 'active';

/** Context waiting in the composer (host side: it carries the text). */
export interface ContextAttachment {
  id: string;
  kind: AttachmentKind;
  /** Workspace-relative path (or file name outside a workspace). */
  path: string;
  /** 1-based inclusive line range of a selection. */
  lines?: { start: number; end: number };
  language: string;
  text: string;
}

/** What a chip shows (the webview never needs the attached text). */
export interface AttachmentChip {
  id: string;
  kind: AttachmentKind;
  label: string;
}

/** Attached text beyond this is cut (the model gets a marker saying so). */
export const MAX_ATTACHMENT_CHARS = 50_000;

const HEADER = /^Attached (selection|file): (.+?)(?: lines (\d+)-(\d+))?$/;
const ACTIVE_HEADER = /^Active file: (.+?) \(open in the editor/;

/** The chip label of an attachment: `path` or `path:3-9`. */
export function chipLabel(attachment: Pick<ContextAttachment, 'path' | 'lines'>): string {
  const { lines } = attachment;
  if (lines === undefined) {
    return attachment.path;
  }
  return lines.start === lines.end
    ? `${attachment.path}:${lines.start}`
    : `${attachment.path}:${lines.start}-${lines.end}`;
}

/** The chip of an attachment. */
export function toChip(attachment: ContextAttachment): AttachmentChip {
  return { id: attachment.id, kind: attachment.kind, label: chipLabel(attachment) };
}

/** The text part an attachment is sent as. */
export function toTextPart(attachment: ContextAttachment): TextPart {
  if (attachment.kind === 'active') {
    return {
      type: 'text',
      text: `Active file: ${attachment.path} (open in the editor; read it when the question is about it)`,
    };
  }
  const { lines } = attachment;
  const range = lines === undefined ? '' : ` lines ${lines.start}-${lines.end}`;
  const body =
    attachment.text.length > MAX_ATTACHMENT_CHARS
      ? `${attachment.text.slice(0, MAX_ATTACHMENT_CHARS)}\n… (cut)`
      : attachment.text;
  let fence = '```';
  while (body.includes(fence)) {
    fence += '`';
  }
  return {
    type: 'text',
    text: `Attached ${attachment.kind}: ${attachment.path}${range}\n${fence}${attachment.language}\n${body}\n${fence}`,
  };
}

/** The chip a stored text part stands for, or `undefined` when it is ordinary text. */
export function chipFromText(text: string, id: string): AttachmentChip | undefined {
  const first = text.split('\n', 1)[0] ?? '';
  const active = ACTIVE_HEADER.exec(first);
  if (active !== null) {
    return { id, kind: 'active', label: active[1] ?? '' };
  }
  const header = HEADER.exec(first);
  if (header === null) {
    return undefined;
  }
  const [, kind, path, start, end] = header;
  const lines =
    start === undefined || end === undefined ? undefined : { start: Number(start), end: Number(end) };
  return { id, kind: kind as AttachmentKind, label: chipLabel({ path: path ?? '', lines }) };
}
