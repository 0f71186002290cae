--- Workspace edits: Neovim's own handler applies them (to buffers, undoable); this module
--- only makes three corner cases behave as the LSP spec (and VS Code) do, on every version.
---
--- 1. Neovim 0.7 skips creating a missing file when `ignoreIfExists` is set (the spec ignores
---    only an *existing* file) and cannot create missing parent directories. Missing files
---    under the workspace root are created empty here first; their text then arrives as the
---    edit, unsaved, like any other.
--- 2. Text inserted into an empty document ends up with an extra empty last line in Neovim
---    when the edit does not reach past the buffer's only line (`"x\n"` would become the
---    lines `x` and `` — `"x\n\n"` once written). Such an edit is widened to the whole
---    (empty) line so Neovim's end-of-line handling applies.
--- 3. An edit for an older version of a buffer is refused (see `stale_reason`).
--- 4. Each edit is its own undo step: the buffer's undo block is closed before it, so `u`
---    takes back one agent edit (or one rewind), never the user's typing with it.
local M = {}

local uv = vim.uv or vim.loop

local function inside(path, root)
  return root ~= nil and path:sub(1, #root + 1) == root .. '/'
end

local function file_path(uri)
  if type(uri) ~= 'string' or not uri:match('^file://') then
    return nil
  end
  return vim.fn.fnamemodify(vim.uri_to_fname(uri), ':p')
end

local function create_missing(change, root)
  local path = file_path(change.uri)
  if path and inside(path, root) and not path:find('/%.%./') and not uv.fs_stat(path) then
    vim.fn.mkdir(vim.fn.fnamemodify(path, ':h'), 'p')
    local file = io.open(path, 'a')
    if file then
      file:close()
    end
  end
end

-- Whether the document an edit targets is empty: its loaded buffer, else the file on disk.
local function document_is_empty(uri)
  local path = file_path(uri)
  if not path then
    return false
  end
  local bufnr = vim.fn.bufnr(path)
  if bufnr ~= -1 and vim.api.nvim_buf_is_loaded(bufnr) then
    local lines = vim.api.nvim_buf_get_lines(bufnr, 0, -1, false)
    return #lines == 1 and lines[1] == ''
  end
  local stat = uv.fs_stat(path)
  return stat ~= nil and stat.size == 0
end

local function at_origin(position)
  return type(position) == 'table' and position.line == 0 and position.character == 0
end

local function widen_empty_document_edits(change)
  local edits = change.edits
  if type(edits) ~= 'table' or #edits ~= 1 then
    return
  end
  local text_edit = edits[1]
  local range = type(text_edit) == 'table' and text_edit.range or nil
  if range and at_origin(range.start) and at_origin(range['end'])
    and type(text_edit.newText) == 'string' and text_edit.newText:sub(-1) == '\n'
    and type(change.textDocument) == 'table' and document_is_empty(change.textDocument.uri)
  then
    range['end'] = { line = 1, character = 0 }
  end
end

-- The version the server last received for a buffer: what Neovim's LSP client sent with
-- didOpen (0) or with the latest didChange (the buffer's changedtick then). Neovim 0.7 to
-- 0.11 keep it in util.buf_versions; 0.11 adds no entry at didOpen (a missing entry reads as
-- 0 there), so a missing entry means 0 on every version. Not `b:changedtick`: that is
-- already past 0 when a file is opened.
local function buffer_version(bufnr)
  local versions = vim.lsp.util.buf_versions
  return type(versions) == 'table' and versions[bufnr] or 0
end

--- Why the edit must be refused, or nil: a versioned edit of a buffer that changed after
--- the server last saw it. Neovim would skip such an edit yet report it as applied; the
--- user's newer text wins, and the agent is told its write did not happen.
function M.stale_reason(params)
  local edit = type(params) == 'table' and params.edit or nil
  if type(edit) ~= 'table' or type(edit.documentChanges) ~= 'table' then
    return nil
  end
  for _, change in ipairs(edit.documentChanges) do
    local document = type(change) == 'table' and change.kind == nil and change.textDocument
    local version = type(document) == 'table' and document.version or nil
    -- 0 counts: it is the version of a buffer the server knows only from didOpen (Neovim's
    -- own check skips it, and would splice old-range edits into newer text)
    if type(version) == 'number' and version >= 0 then
      local path = file_path(document.uri)
      local bufnr = path and vim.fn.bufnr(path) or -1
      if bufnr ~= -1 and vim.api.nvim_buf_is_loaded(bufnr) and buffer_version(bufnr) > version
      then
        return string.format('%s changed in the editor after the agent read it; not applied',
          vim.fn.fnamemodify(path, ':t'))
      end
    end
  end
  return nil
end

-- Setting 'undolevels' (even to its own value) closes the current undo block (:help undo).
local function close_undo_block(change)
  local path = type(change.textDocument) == 'table' and file_path(change.textDocument.uri)
  local bufnr = path and vim.fn.bufnr(path) or -1
  if bufnr ~= -1 and vim.api.nvim_buf_is_loaded(bufnr) then
    vim.api.nvim_buf_call(bufnr, function()
      vim.cmd('let &undolevels = &undolevels')
    end)
  end
end

--- Prepare ApplyWorkspaceEditParams for Neovim's handler (changes `params` in place).
function M.prepare(params, root)
  local edit = type(params) == 'table' and params.edit or nil
  if type(edit) ~= 'table' or type(edit.documentChanges) ~= 'table' then
    return
  end
  for _, change in ipairs(edit.documentChanges) do
    if type(change) == 'table' and change.kind == 'create' then
      create_missing(change, root)
    elseif type(change) == 'table' and change.kind == nil then
      widen_empty_document_edits(change)
      close_undo_block(change)
    end
  end
end

return M
