import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ChatModel } from '../src/model/chatModel';
import { LIVE_OUTPUT_CHARS } from '../src/model/turnEvents';
import { TerminalMirror, toTerminalText } from '../src/model/terminalMirror';
import { parseWebviewMessage } from '../src/shared/webviewMessages';
import { SESSION, stamp } from './fixtures';

function running(): ChatModel {
  const model = new ChatModel();
  model.startFresh(SESSION, 'agent');
  model.applyEvent(
    stamp(1, { type: 'agent:tool_call', toolId: 'run_command', callId: 'c', toolInput: {}, model: 'm' }),
  );
  return model;
}

function output(sequence: number, text: string) {
  return stamp(sequence, {
    type: 'agent:tool_output',
    toolId: 'run_command',
    callId: 'c',
    text,
    truncated: false,
  });
}

function result(sequence: number, success: boolean, outputSummary: string) {
  return stamp(sequence, {
    type: 'agent:tool_result',
    toolId: 'run_command',
    callId: 'c',
    success,
    outputSummary,
    durationMs: 5,
  });
}

describe('TerminalMirror', () => {
  it('writes each new piece once, with CRLF, then the closing line', () => {
    const model = running();
    const mirror = new TerminalMirror();
    assert.equal(mirror.next(model.toolCard('c')), '');
    model.applyEvent(output(2, 'one\ntw'));
    assert.equal(mirror.next(model.toolCard('c')), 'one\r\ntw');
    assert.equal(mirror.next(model.toolCard('c')), '');
    model.applyEvent(output(3, 'o\n'));
    assert.equal(mirror.next(model.toolCard('c')), 'o\r\n');
    model.applyEvent(result(4, true, 'one\ntwo\n'));
    assert.equal(mirror.next(model.toolCard('c')), '── succeeded ──\r\n');
    assert.ok(mirror.done);
    assert.equal(mirror.next(model.toolCard('c')), '');
  });

  it('keeps up when the card keeps only the tail', () => {
    const model = running();
    const mirror = new TerminalMirror();
    model.applyEvent(output(2, 'a'.repeat(LIVE_OUTPUT_CHARS)));
    assert.equal(mirror.next(model.toolCard('c')), 'a'.repeat(LIVE_OUTPUT_CHARS));
    model.applyEvent(output(3, 'bcd'));
    assert.equal(mirror.next(model.toolCard('c')), 'bcd');
  });

  it('shows the result of a finished call, or after pieces it missed', () => {
    const model = running();
    model.applyEvent(result(2, false, 'boom'));
    assert.equal(new TerminalMirror().next(model.toolCard('c')), 'boom\r\n── failed ──\r\n');

    const late = running();
    const mirror = new TerminalMirror();
    late.applyEvent(output(2, 'x'));
    assert.equal(mirror.next(late.toolCard('c')), 'x');
    late.applyEvent(output(3, 'y'));
    late.applyEvent(result(4, true, 'xy'));
    assert.equal(mirror.next(late.toolCard('c')), '\r\n…\r\nxy\r\n── succeeded ──\r\n');
  });

  it('converts line ends and accepts the webview message', () => {
    assert.equal(toTerminalText('a\r\nb\nc'), 'a\r\nb\r\nc');
    assert.deepEqual(parseWebviewMessage({ type: 'openTerminal', callId: 'c' }), {
      type: 'openTerminal',
      callId: 'c',
    });
    assert.equal(parseWebviewMessage({ type: 'openTerminal', callId: '' }), undefined);
  });
});
