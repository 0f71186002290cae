/**
 * The platforms the server runs on: Linux and macOS. Windows lacks the POSIX interfaces it is
 * built on (pseudo-terminals and process groups for the agent's commands, fcntl file locks), so
 * there the extension says so once, in one sentence, instead of failing to start a server.
 */

export const UNSUPPORTED_PLATFORM_MESSAGE =
  'Relavium runs on Linux and macOS; on Windows, open the folder in WSL (the WSL extension) and use Relavium there.';

/** The sentence to show on `platform` (Node's `process.platform`), or undefined where Relavium runs. */
export function unsupportedPlatformMessage(platform: NodeJS.Platform): string | undefined {
  return platform === 'win32' ? UNSUPPORTED_PLATFORM_MESSAGE : undefined;
}
