/**
 * Does the server that answered `initialize` belong with this extension? It states its package
 * version (`serverInfo.version`) and wire protocol version
 * (`capabilities.experimental.relavium.protocolVersion`); the extension compares them with the
 * generated `PACKAGE_VERSION` / `PROTOCOL_VERSION` (relavium_lsp/contracts/versions.py says
 * when the protocol number changes). Pure: no `vscode` import.
 */

import { PACKAGE_VERSION, PROTOCOL_VERSION } from '../protocol';

export type VersionVerdict =
  /** Same protocol and package: nothing to say. */
  | { kind: 'match' }
  /** Same protocol, another package version: it works; the matching server may be offered. */
  | { kind: 'package-differs'; serverVersion: string }
  /** Another (or no) protocol version: the extension must not use it. */
  | { kind: 'protocol-differs'; serverVersion: string; serverProtocol: number | undefined };

/** What an `initialize` result says about versions (fields missing when the server is older). */
export interface InitializeFacts {
  serverInfo?: { name: string; version?: string };
  capabilities?: { experimental?: unknown };
}

/** The protocol version the server declared, if any. */
export function declaredProtocol(facts: InitializeFacts): number | undefined {
  const experimental = facts.capabilities?.experimental;
  if (typeof experimental !== 'object' || experimental === null) {
    return undefined;
  }
  const relavium = (experimental as Record<string, unknown>).relavium;
  if (typeof relavium !== 'object' || relavium === null) {
    return undefined;
  }
  const version = (relavium as Record<string, unknown>).protocolVersion;
  return typeof version === 'number' && Number.isInteger(version) ? version : undefined;
}

/** Compare the server's versions with this extension's. */
export function checkVersions(
  facts: InitializeFacts,
  own: { packageVersion: string; protocolVersion: number } = {
    packageVersion: PACKAGE_VERSION,
    protocolVersion: PROTOCOL_VERSION,
  },
): VersionVerdict {
  const serverVersion = facts.serverInfo?.version ?? 'unknown';
  const serverProtocol = declaredProtocol(facts);
  if (serverProtocol !== own.protocolVersion) {
    return { kind: 'protocol-differs', serverVersion, serverProtocol };
  }
  return serverVersion === own.packageVersion
    ? { kind: 'match' }
    : { kind: 'package-differs', serverVersion };
}

/** One sentence for the user (and the log) about a verdict other than a match. */
export function describeMismatch(verdict: VersionVerdict, packageVersion: string = PACKAGE_VERSION): string {
  switch (verdict.kind) {
    case 'match':
      return `The Relavium server matches this extension (${packageVersion}).`;
    case 'package-differs':
      return (
        `The Relavium server is version ${verdict.serverVersion}; this extension is ${packageVersion}. ` +
        'They speak the same protocol, so it works, but the matching server can be installed.'
      );
    case 'protocol-differs':
      return (
        `The Relavium server (version ${verdict.serverVersion}, protocol ` +
        `${verdict.serverProtocol ?? 'none'}) does not match this extension (version ${packageVersion}, ` +
        `protocol ${PROTOCOL_VERSION}), so it is not used. Install the matching server.`
      );
  }
}
