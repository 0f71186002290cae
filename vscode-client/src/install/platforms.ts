/**
 * Where the extension (and the server it starts) runs: Linux and macOS. The server needs
 * POSIX terminals (`pty`, `termios`, `fcntl`), so on Windows the extension stops at once with
 * one sentence instead of failing later. In a remote window this is the remote machine's OS.
 */

export const SUPPORTED_PLATFORMS: readonly NodeJS.Platform[] = ['linux', 'darwin'];

/** The sentence to show on an unsupported OS, or undefined where Relavium runs. */
export function unsupportedPlatform(platform: NodeJS.Platform): string | undefined {
  if (SUPPORTED_PLATFORMS.includes(platform)) {
    return undefined;
  }
  const name = platform === 'win32' ? 'Windows' : platform;
  return (
    `Relavium runs on Linux and macOS only; ${name} is not supported (its server needs POSIX ` +
    'terminals). Use WSL or a Remote-SSH window to a Linux or macOS machine.'
  );
}
