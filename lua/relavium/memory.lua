--- The workspace's long-term memory in a buffer, `relavium://memory` (`:RelaviumMemory`).
---
--- The buffer is `buftype=acwrite`: `:w` sends the text with `relavium/setWorkspaceMemory`,
--- based on the revision the buffer was loaded from, and `:e` loads it again. When another
--- window (or an introspection checkpoint) saved a newer revision meanwhile, the save is
--- refused and the buffer keeps the user's text; an unmodified buffer follows new revisions
--- by itself (`relavium/workspaceMemoryChanged`).
local client = require('relavium.client')
local protocol = require('relavium.protocol')

local M = {}

local NAME = 'relavium://memory'
local uv = vim.uv or vim.loop

local state = {
  bufnr = nil,
  revision = 0, -- the revision the buffer text is based on
  workspace = nil, -- the server's name for the workspace (its real path)
  last_error = nil, -- the last refused save's error (tests and :messages read it)
}

local function valid(bufnr)
  return bufnr ~= nil and vim.api.nvim_buf_is_valid(bufnr)
end

local function params()
  return { workingDir = client.root() }
end

local function notify(message, level)
  vim.notify('relavium: ' .. message, level or vim.log.levels.INFO)
end

local function set_text(bufnr, text)
  local lines = vim.split(text, '\n', { plain = true })
  if #lines > 1 and lines[#lines] == '' then
    table.remove(lines) -- the document's final newline is the buffer's last line end
  end
  vim.api.nvim_buf_set_lines(bufnr, 0, -1, false, lines)
  vim.api.nvim_buf_set_option(bufnr, 'modified', false)
end

local function buffer_text(bufnr)
  local text = table.concat(vim.api.nvim_buf_get_lines(bufnr, 0, -1, false), '\n')
  if text == '' then
    return ''
  end
  return text .. '\n'
end

local function take(result)
  state.revision = result.revision or 0
  state.workspace = result.workspace
  if valid(state.bufnr) then
    vim.api.nvim_buf_set_var(state.bufnr, 'relavium_memory_revision', state.revision)
  end
end

--- Load the stored document into the buffer (replacing its text).
function M.load(bufnr, on_done)
  client.request(protocol.GET_WORKSPACE_MEMORY, params(), function(err, result)
    if err then
      notify('could not read the workspace memory: ' .. tostring(err.message), vim.log.levels.ERROR)
      return
    end
    if not valid(bufnr) then
      return
    end
    take(result)
    set_text(bufnr, result.text or '')
    if on_done then
      on_done(result)
    end
  end)
end

--- Save the buffer (`:w`): a new revision, or a refusal that keeps the buffer as it is.
function M.save(bufnr)
  local text = buffer_text(bufnr)
  local request = vim.tbl_extend('force', params(), { text = text, baseRevision = state.revision })
  client.request(protocol.SET_WORKSPACE_MEMORY, request, function(err, result)
    if err then
      state.last_error = err
      local data = type(err.data) == 'table' and err.data or {}
      if data.code == 'memory_conflict' then
        notify(
          ('the workspace memory changed in another window (revision %s); your text is kept: '
            .. 'copy what you need, :e to load the new revision, and save again'):format(
            tostring(data.currentRevision)
          ),
          vim.log.levels.ERROR
        )
      else
        notify('not saved: ' .. tostring(err.message), vim.log.levels.ERROR)
      end
      return
    end
    state.last_error = nil
    take(result)
    if valid(bufnr) and buffer_text(bufnr) == text then
      vim.api.nvim_buf_set_option(bufnr, 'modified', false)
    end
    notify(('workspace memory saved (revision %d)'):format(state.revision))
  end)
end

local function create()
  local bufnr = vim.api.nvim_create_buf(true, false)
  vim.api.nvim_buf_set_name(bufnr, NAME)
  vim.api.nvim_buf_set_option(bufnr, 'buftype', 'acwrite')
  vim.api.nvim_buf_set_option(bufnr, 'swapfile', false)
  vim.api.nvim_buf_set_option(bufnr, 'bufhidden', 'hide')
  vim.api.nvim_buf_set_option(bufnr, 'filetype', 'markdown')
  local group = vim.api.nvim_create_augroup('relavium_memory', { clear = true })
  vim.api.nvim_create_autocmd('BufWriteCmd', {
    group = group,
    buffer = bufnr,
    callback = function()
      M.save(bufnr)
    end,
  })
  vim.api.nvim_create_autocmd('BufReadCmd', {
    group = group,
    buffer = bufnr,
    callback = function()
      M.load(bufnr)
    end,
  })
  vim.api.nvim_create_autocmd('BufWipeout', {
    group = group,
    buffer = bufnr,
    callback = function()
      state.bufnr = nil
    end,
  })
  state.bufnr = bufnr
  return bufnr
end

--- `:RelaviumMemory`: show the workspace memory buffer (loading it the first time).
function M.open()
  local bufnr = state.bufnr
  local fresh = not valid(bufnr)
  if fresh then
    bufnr = create()
  end
  local win = vim.fn.bufwinid(bufnr)
  if win ~= -1 then
    vim.api.nvim_set_current_win(win)
  else
    vim.cmd('botright split')
    vim.api.nvim_win_set_buf(0, bufnr)
  end
  if fresh then
    M.load(bufnr)
  end
  return bufnr
end

--- `relavium/workspaceMemoryChanged`: an unmodified buffer loads the new revision; a
--- modified one is left alone (its save will be refused) and the user is told.
function M.on_changed(change)
  local bufnr = state.bufnr
  if not valid(bufnr) or type(change) ~= 'table' or (change.revision or 0) <= state.revision then
    return
  end
  local root = uv.fs_realpath(client.root()) or client.root()
  if change.workspace ~= (state.workspace or root) then
    return
  end
  if vim.api.nvim_buf_get_option(bufnr, 'modified') then
    notify(('the workspace memory has a newer revision (%d) than your unsaved edit'):format(
      change.revision
    ), vim.log.levels.WARN)
    return
  end
  M.load(bufnr)
end

--- The memory buffer's state (for tests and statuslines).
function M.state()
  return {
    bufnr = state.bufnr,
    revision = state.revision,
    workspace = state.workspace,
    last_error = state.last_error,
  }
end

return M
