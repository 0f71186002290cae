import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { toDiagnostics, toLocations, toSymbols } from '../src/model/editorAnswers';

const file = (fsPath: string) => ({ fsPath, scheme: 'file' });
const at = (line: number, character: number) => ({ start: { line, character } });

describe('editor answers', () => {
  it('turns VS Code diagnostics into 1-based protocol diagnostics, files only, capped', () => {
    const entries = [
      [
        file('/ws/app.py'),
        [
          {
            range: at(1, 11),
            message: 'suspicious minus',
            severity: 1,
            source: 'test-lint',
            code: { value: 'W1' },
          },
          { range: at(0, 0), message: 'no docstring', severity: 3 },
        ],
      ],
      [{ fsPath: '/x', scheme: 'untitled' }, [{ range: at(0, 0), message: 'skip me', severity: 0 }]],
    ] as const;
    assert.deepEqual(toDiagnostics(entries, 10), [
      {
        path: '/ws/app.py',
        line: 2,
        character: 12,
        severity: 'warning',
        message: 'suspicious minus',
        source: 'test-lint',
        code: 'W1',
      },
      { path: '/ws/app.py', line: 1, character: 1, severity: 'hint', message: 'no docstring' },
    ]);
    assert.equal(toDiagnostics(entries, 1).length, 1);
  });

  it('reads locations and location links', () => {
    const found = toLocations(
      [
        { uri: file('/ws/a.py'), range: at(4, 2) },
        { targetUri: file('/ws/b.py'), targetRange: at(9, 0), targetSelectionRange: at(9, 4) },
        { uri: { fsPath: '/lib', scheme: 'git' }, range: at(0, 0) },
      ],
      10,
    );
    assert.deepEqual(found, [
      { path: '/ws/a.py', line: 5, character: 3 },
      { path: '/ws/b.py', line: 10, character: 5 },
    ]);
  });

  it('flattens document symbols with their containers, and reads workspace symbols', () => {
    const kinds = (kind: number) =>
      ['File', 'Module', 'Namespace', 'Package', 'Class', 'Method'][kind] ?? '?';
    const outline = toSymbols(
      '/ws/app.py',
      [
        {
          name: 'Greeter',
          kind: 4,
          range: at(0, 0),
          selectionRange: at(0, 6),
          children: [{ name: 'greet', kind: 5, range: at(1, 4), selectionRange: at(1, 8) }],
        },
      ],
      10,
      kinds,
    );
    assert.deepEqual(outline, [
      { name: 'Greeter', kind: 'Class', path: '/ws/app.py', line: 1, character: 7 },
      { name: 'greet', kind: 'Method', path: '/ws/app.py', line: 2, character: 9, container: 'Greeter' },
    ]);
    const workspace = toSymbols(
      undefined,
      [
        {
          name: 'greet',
          kind: 5,
          containerName: 'Greeter',
          location: { uri: file('/ws/app.py'), range: at(1, 8) },
        },
      ],
      10,
      kinds,
    );
    assert.deepEqual(workspace, [
      { name: 'greet', kind: 'Method', path: '/ws/app.py', line: 2, character: 9, container: 'Greeter' },
    ]);
  });
});
