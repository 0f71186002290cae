--- `:RelaviumSessionList`: a buffer listing this workspace's sessions that keeps itself
--- current. The server sends `relavium/sessionsChanged` whenever any editor window on the
--- same history creates, renames, deletes or runs a session; the list then asks again.
--- `<CR>` resumes the session under the cursor, `R` refreshes by hand.
local client = require('relavium.client')
local protocol = require('relavium.protocol')

local M = {}

local BUFFER_NAME = 'relavium://sessions'
local REFRESH_DELAY_MS = 100 -- changes arriving together cause one listSessions
local HEADER = 'Relavium sessions — <CR> resume · R refresh (updates by itself)'

local state = { buf = nil, ids = {}, scheduled = false, requested = 0 }

local function valid()
  return state.buf ~= nil and vim.api.nvim_buf_is_valid(state.buf)
end

local function set_lines(lines)
  vim.api.nvim_buf_set_option(state.buf, 'modifiable', true)
  vim.api.nvim_buf_set_lines(state.buf, 0, -1, false, lines)
  vim.api.nvim_buf_set_option(state.buf, 'modifiable', false)
end

local function show(sessions)
  local lines, ids = { HEADER }, {}
  local describe = require('relavium.sessions').describe
  local tree = require('relavium.session_tree')
  for _, entry in ipairs(tree.nest(sessions)) do
    table.insert(lines, tree.prefix(entry.depth) .. describe(entry.session))
    ids[#lines] = entry.session.id
  end
  if #sessions == 0 then
    table.insert(lines, '(no sessions yet)')
  end
  state.ids = ids
  set_lines(lines)
end

--- Ask the server for the list again and show it (nothing when the list is closed).
function M.refresh()
  if not valid() then
    return
  end
  state.requested = state.requested + 1
  local asked = state.requested
  client.request(protocol.LIST_SESSIONS, { workspace = client.root(), limit = 200 },
    function(err, result)
      if asked ~= state.requested or not valid() then
        return -- a newer answer is on its way, or the list was closed
      end
      if err or type(result) ~= 'table' then
        set_lines({ HEADER, 'listSessions failed: ' .. ((err and err.message) or '?') })
        return
      end
      show(result.sessions or {})
    end)
end

--- `relavium/sessionsChanged` handler: refresh soon (several changes, one request).
function M.on_sessions_changed(_params)
  if not valid() or state.scheduled then
    return
  end
  state.scheduled = true
  vim.defer_fn(function()
    state.scheduled = false
    M.refresh()
  end, REFRESH_DELAY_MS)
end

--- The session id on a line of the list, or nil.
function M.session_at(line)
  return state.ids[line]
end

--- Open (or show again) the list in a split and fill it.
function M.open()
  if not valid() then
    state.buf = vim.api.nvim_create_buf(false, true)
    vim.api.nvim_buf_set_name(state.buf, BUFFER_NAME)
    vim.api.nvim_buf_set_option(state.buf, 'buftype', 'nofile')
    vim.api.nvim_buf_set_option(state.buf, 'bufhidden', 'hide')
    vim.api.nvim_buf_set_option(state.buf, 'swapfile', false)
    vim.api.nvim_buf_set_option(state.buf, 'filetype', 'relavium-sessions')
    vim.keymap.set('n', '<CR>', function()
      local id = M.session_at(vim.api.nvim_win_get_cursor(0)[1])
      if id then
        require('relavium.sessions').resume(id)
      end
    end, { buffer = state.buf, desc = 'Relavium: resume this session' })
    vim.keymap.set('n', 'R', M.refresh, { buffer = state.buf, desc = 'Relavium: refresh' })
    set_lines({ HEADER, 'loading…' })
  end
  local shown = vim.fn.bufwinid(state.buf)
  if shown == -1 then
    vim.cmd('botright split')
    vim.api.nvim_win_set_buf(0, state.buf)
  else
    vim.api.nvim_set_current_win(shown)
  end
  M.refresh()
  return state.buf
end

return M
