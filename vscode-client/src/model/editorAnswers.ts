/**
 * VS Code's language answers → the `relavium/editorQuery` result (pure: no `vscode` import).
 *
 * The host glue (`server/editorTools.ts`) asks VS Code (`languages.getDiagnostics`, the
 * `vscode.execute*Provider` commands) and passes what it got here; these functions only
 * reshape it: 1-based positions, file paths, severities and symbol kinds by name, capped.
 */

import type { DiagnosticSeverity, EditorDiagnostic, EditorLocation, EditorSymbol } from '../protocol';

export interface PositionLike {
  line: number;
  character: number;
}
export interface RangeLike {
  start: PositionLike;
}
export interface UriLike {
  fsPath: string;
  scheme: string;
}
export interface LocationLike {
  uri: UriLike;
  range: RangeLike;
}
export interface LocationLinkLike {
  targetUri: UriLike;
  targetRange: RangeLike;
  targetSelectionRange?: RangeLike;
}
export interface DiagnosticLike {
  range: RangeLike;
  message: string;
  severity: number;
  source?: string;
  code?: string | number | { value: string | number };
}
export interface DocumentSymbolLike {
  name: string;
  kind: number;
  range: RangeLike;
  selectionRange: RangeLike;
  children?: readonly DocumentSymbolLike[];
}
export interface SymbolInformationLike {
  name: string;
  kind: number;
  containerName?: string;
  location: LocationLike;
}

/** VS Code's `DiagnosticSeverity` (Error = 0 … Hint = 3) as the protocol names it. */
const SEVERITIES: readonly DiagnosticSeverity[] = ['error', 'warning', 'information', 'hint'];

function codeText(code: DiagnosticLike['code']): string | undefined {
  if (code === undefined) {
    return undefined;
  }
  return typeof code === 'object' ? String(code.value) : String(code);
}

/** Diagnostics per file → protocol diagnostics (only `file:` documents; at most `limit`). */
export function toDiagnostics(
  entries: readonly (readonly [UriLike, readonly DiagnosticLike[]])[],
  limit: number,
): EditorDiagnostic[] {
  const out: EditorDiagnostic[] = [];
  for (const [uri, diagnostics] of entries) {
    if (uri.scheme !== 'file') {
      continue;
    }
    for (const diagnostic of diagnostics) {
      if (out.length >= limit) {
        return out;
      }
      const code = codeText(diagnostic.code);
      out.push({
        path: uri.fsPath,
        line: diagnostic.range.start.line + 1,
        character: diagnostic.range.start.character + 1,
        severity: SEVERITIES[diagnostic.severity] ?? 'error',
        message: diagnostic.message,
        ...(diagnostic.source === undefined ? {} : { source: diagnostic.source }),
        ...(code === undefined ? {} : { code }),
      });
    }
  }
  return out;
}

function isLink(item: LocationLike | LocationLinkLike): item is LocationLinkLike {
  return 'targetUri' in item;
}

/** Locations or location links → protocol locations (only `file:` targets; at most `limit`). */
export function toLocations(
  items: readonly (LocationLike | LocationLinkLike)[],
  limit: number,
): EditorLocation[] {
  const out: EditorLocation[] = [];
  for (const item of items) {
    const uri = isLink(item) ? item.targetUri : item.uri;
    const range = isLink(item) ? (item.targetSelectionRange ?? item.targetRange) : item.range;
    if (uri.scheme !== 'file' || out.length >= limit) {
      continue;
    }
    out.push({ path: uri.fsPath, line: range.start.line + 1, character: range.start.character + 1 });
  }
  return out;
}

function isDocumentSymbol(item: DocumentSymbolLike | SymbolInformationLike): item is DocumentSymbolLike {
  return 'selectionRange' in item;
}

/** Document symbols (nested) or symbol information → protocol symbols, flattened, capped. */
export function toSymbols(
  path: string | undefined,
  items: readonly (DocumentSymbolLike | SymbolInformationLike)[],
  limit: number,
  kindName: (kind: number) => string,
): EditorSymbol[] {
  const out: EditorSymbol[] = [];
  const visit = (symbol: DocumentSymbolLike | SymbolInformationLike, container?: string): void => {
    if (out.length >= limit) {
      return;
    }
    if (isDocumentSymbol(symbol)) {
      if (path === undefined) {
        return;
      }
      const start = symbol.selectionRange.start;
      out.push({
        name: symbol.name,
        kind: kindName(symbol.kind),
        path,
        line: start.line + 1,
        character: start.character + 1,
        ...(container === undefined ? {} : { container }),
      });
      for (const child of symbol.children ?? []) {
        visit(child, symbol.name);
      }
      return;
    }
    if (symbol.location.uri.scheme !== 'file') {
      return;
    }
    const start = symbol.location.range.start;
    const parent =
      symbol.containerName === undefined || symbol.containerName === '' ? undefined : symbol.containerName;
    out.push({
      name: symbol.name,
      kind: kindName(symbol.kind),
      path: symbol.location.uri.fsPath,
      line: start.line + 1,
      character: start.character + 1,
      ...(parent === undefined ? {} : { container: parent }),
    });
  };
  for (const item of items) {
    visit(item);
  }
  return out;
}
