--- Where the user is: `relavium/editorState {uri, selection?}` for the focused file buffer.
---
--- Sent on BufEnter and CursorMoved, debounced with one libuv timer so moving the cursor
--- across a file sends one notification; a visual selection travels as an LSP range
--- (0-based lines, UTF-16 columns, end exclusive). `:RelaviumAsk` sends its range at once.
local client = require('relavium.client')
local config = require('relavium.config')
local protocol = require('relavium.protocol')

local M = {}

local timer = nil

--- UTF-16 code units in the first `byte_count` bytes of `line` (LSP columns).
function M.utf16_column(line, byte_count)
  local units = 0
  local index = 1
  local limit = math.min(byte_count, #line)
  while index <= limit do
    local byte = line:byte(index)
    local width
    if byte < 0x80 then
      width = 1
    elseif byte >= 0xF0 then
      width = 4
    elseif byte >= 0xE0 then
      width = 3
    elseif byte >= 0xC0 then
      width = 2
    else
      width = 1 -- a stray continuation byte counts as one unit
    end
    units = units + (width == 4 and 2 or 1)
    index = index + width
  end
  return units
end

--- The LSP range of whole lines `first`..`last` (1-based, inclusive).
function M.line_range(first, last)
  return {
    start = { line = first - 1, character = 0 },
    ['end'] = { line = last, character = 0 },
  }
end

local function position(bufnr, lnum, byte_column)
  local line = vim.api.nvim_buf_get_lines(bufnr, lnum - 1, lnum, false)[1] or ''
  return { line = lnum - 1, character = M.utf16_column(line, byte_column) }
end

-- The visual selection of the current window, while in visual mode.
local function visual_range(bufnr)
  local mode = vim.api.nvim_get_mode().mode
  local kind = mode:sub(1, 1)
  if kind ~= 'v' and kind ~= 'V' and mode ~= '\22' then
    return nil
  end
  local anchor = vim.fn.getpos('v')
  local cursor = vim.fn.getpos('.')
  local first, last = anchor, cursor
  if cursor[2] < anchor[2] or (cursor[2] == anchor[2] and cursor[3] < anchor[3]) then
    first, last = cursor, anchor
  end
  if kind == 'V' then
    return M.line_range(first[2], last[2])
  end
  -- charwise (and blockwise, approximated by its bounding lines): the end is inclusive in
  -- Vim, exclusive in LSP, so it moves past the last selected character
  local last_line = vim.api.nvim_buf_get_lines(bufnr, last[2] - 1, last[2], false)[1] or ''
  local last_char_bytes = #vim.fn.strcharpart(last_line:sub(last[3]), 0, 1)
  return {
    start = position(bufnr, first[2], first[3] - 1),
    ['end'] = position(bufnr, last[2], last[3] - 1 + math.max(last_char_bytes, 1)),
  }
end

--- Send the editor state of `bufnr` now (`range`: an LSP range, or nil for none).
function M.send_now(bufnr, range)
  if timer then
    timer:stop()
  end
  if not client.should_attach(bufnr) then
    return
  end
  local params = { uri = vim.uri_from_bufnr(bufnr) }
  params.selection = range
  client.notify(protocol.EDITOR_STATE, params)
end

--- Debounced update for the current buffer (BufEnter / CursorMoved).
function M.schedule_update()
  if not client.get() then
    return -- never start the server just to say where the cursor is
  end
  if not timer then
    timer = (vim.uv or vim.loop).new_timer()
  end
  timer:stop()
  timer:start(config.options.editor_state_debounce_ms, 0, vim.schedule_wrap(function()
    local bufnr = vim.api.nvim_get_current_buf()
    M.send_now(bufnr, visual_range(bufnr))
  end))
end

--- `:'<,'>RelaviumAsk {text}`: the selection becomes context, and its text is quoted into
--- the message (a running session's context was fixed at its start).
function M.ask(text, first, last)
  local bufnr = vim.api.nvim_get_current_buf()
  if not client.should_attach(bufnr) then
    vim.notify('relavium: :RelaviumAsk works on a file of the workspace', vim.log.levels.WARN)
    return nil
  end
  local _, message = client.start()
  if message then
    vim.notify('relavium: ' .. message, vim.log.levels.ERROR)
    return nil
  end
  M.send_now(bufnr, M.line_range(first, last))
  local lines = vim.api.nvim_buf_get_lines(bufnr, first - 1, last, false)
  local quoted = table.concat(lines, '\n')
  local fence = quoted:find('```', 1, true) and '~~~~' or '```'
  local path = vim.fn.fnamemodify(vim.api.nvim_buf_get_name(bufnr), ':p')
  local root = client.root()
  local name = path:sub(1, #root + 1) == root .. '/' and path:sub(#root + 2) or path
  local prompt = string.format('About `%s` lines %d-%d:\n\n%s%s\n%s\n%s\n\n%s', name, first,
    last, fence, vim.bo[bufnr].filetype, quoted, fence, text or '')
  return require('relavium.chat').send(prompt)
end

return M
