import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { UNSUPPORTED_PLATFORM_MESSAGE, unsupportedPlatformMessage } from '../src/server/platform';

describe('unsupportedPlatformMessage', () => {
  it('lets Linux and macOS start the server', () => {
    assert.equal(unsupportedPlatformMessage('linux'), undefined);
    assert.equal(unsupportedPlatformMessage('darwin'), undefined);
  });

  it('stops on Windows with one sentence that says what to do', () => {
    assert.equal(unsupportedPlatformMessage('win32'), UNSUPPORTED_PLATFORM_MESSAGE);
    assert.match(UNSUPPORTED_PLATFORM_MESSAGE, /^Relavium runs on Linux and macOS; .*WSL.*\.$/);
    assert.equal(UNSUPPORTED_PLATFORM_MESSAGE.split('. ').length, 1);
  });
});
