import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { displayItems } from '../src/model/display';
import { doneTitle, groupTitle, resultNote, toolTitle } from '../src/model/toolTitles';
import { newToolCard } from '../src/model/transcript';
import type { ChatItem, ToolItem } from '../src/shared/viewState';

let rev = 0;

function tool(
  id: string,
  toolId: string,
  input: Record<string, unknown>,
  state: ToolItem['state'] = 'succeeded',
): ToolItem {
  rev += 1;
  return { ...newToolCard(id, rev, id, toolId, input), state };
}

const text = (id: string): ChatItem => ({
  kind: 'assistant',
  id,
  rev: 0,
  text: 'x',
  reasoning: '',
  streaming: false,
});

describe('tool titles', () => {
  it('say what a call does in a few words', () => {
    assert.equal(toolTitle('read_file', { path: 'src/greeting.py' }), 'Read greeting.py');
    assert.equal(toolTitle('search_files', { pattern: 'def greet' }), 'Searched “def greet”');
    assert.equal(toolTitle('run_command', { command: ['pytest', '-q'] }), 'Ran pytest -q');
    assert.equal(toolTitle('list_directory', { path: '.' }), 'Listed the workspace');
    assert.equal(toolTitle('mcp_time_now', {}), 'mcp time now');
    assert.equal(doneTitle(toolTitle('edit_file', { path: 'a/b.py' })), 'Edited b.py');
    assert.equal(doneTitle('Commit'), 'Committed');
  });

  it('tell what a search found', () => {
    assert.equal(
      resultNote('search_files', true, 'a.py:1: x\nb.py:2: y\n[2 matches in 2 files in .]'),
      '2 files',
    );
    assert.equal(resultNote('search_files', true, 'a.py:1: x\n[1 match in 1 file in .]'), '1 file');
    assert.equal(resultNote('search_files', true, 'No matches.\n[0 matches in 0 files in .]'), 'no matches');
    assert.equal(resultNote('search_files', false, 'bad regex'), undefined);
    assert.equal(resultNote('read_file', true, 'text'), undefined);
  });

  it('sum up a group', () => {
    assert.equal(groupTitle(['read_file', 'search_files', 'read_file']), 'Read 2 files, searched 1 pattern');
    assert.equal(groupTitle(['git_status']), '1 more look');
  });
});

describe('displayItems', () => {
  it('groups consecutive finished read-only calls and hides the plan tool', () => {
    const items: ChatItem[] = [
      text('a1'),
      tool('t1', 'read_file', { path: 'a.py' }),
      tool('t2', 'update_plan', { plan: [] }),
      tool('t3', 'search_files', { pattern: 'x' }),
      tool('t4', 'edit_file', { path: 'a.py' }),
      tool('t5', 'read_file', { path: 'b.py' }),
      tool('t6', 'read_file', { path: 'c.py' }, 'running'),
    ];
    const shown = displayItems(items);
    assert.deepEqual(
      shown.map((item) => item.id),
      ['a1', 'group:t1', 't4', 't5', 't6'],
    );
    const group = shown[1];
    assert.ok(group?.kind === 'toolGroup');
    assert.deepEqual(
      group.tools.map((member) => member.id),
      ['t1', 't3'],
    );
  });

  it('changes a group revision when a member changes or joins', () => {
    const first = tool('t1', 'read_file', { path: 'a.py' });
    const second = tool('t2', 'read_file', { path: 'b.py' });
    const before = displayItems([first, second])[0]?.rev;
    second.rev = 1000;
    const after = displayItems([first, second])[0]?.rev;
    const joined = displayItems([first, second, tool('t3', 'read_file', { path: 'c.py' })])[0]?.rev;
    assert.notEqual(before, after);
    assert.notEqual(after, joined);
  });

  it('keeps a failed or approval-carrying call out of groups', () => {
    const failed = tool('t1', 'read_file', { path: 'a.py' }, 'failed');
    const plan = tool('t2', 'update_plan', {}, 'failed');
    assert.deepEqual(
      displayItems([failed, tool('t3', 'read_file', { path: 'b.py' }), plan]).map((item) => item.id),
      ['t1', 't3', 't2'],
    );
  });
});
