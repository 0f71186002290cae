--- The chat buffer: a scratch buffer the plugin appends to, with folded blocks.
---
--- The buffer only ever grows (or is cleared as a whole), so the fold level of every line is
--- kept in a Lua table and served to 'foldexpr'; blocks such as tool calls start a fold on
--- their first line. Streaming text is appended at the end of the last line with one
--- `nvim_buf_set_text` call per delta — nothing already rendered is rewritten, except a
--- label added at the end of a block's first line once its fate is known (`mark`: a message
--- cancelled, a tool call interrupted). Messages waiting to be sent show as virtual lines
--- under the last line (`set_footer`), so a running turn keeps streaming above them.
local M = {}

local api = vim.api
local namespace = api.nvim_create_namespace('relavium_chat')
local ChatBuffer = {}
ChatBuffer.__index = ChatBuffer

local fold_levels = {} -- bufnr -> { [lnum] = level string or number }
local counter = 0

--- 'foldexpr' of chat windows: the stored level of line `lnum` of the current buffer.
function M.foldexpr(lnum)
  local levels = fold_levels[api.nvim_get_current_buf()]
  return levels and levels[lnum] or 0
end

--- 'foldtext' of chat windows: the block's first line and how many lines it hides.
function M.foldtext()
  local first = vim.fn.getline(vim.v.foldstart)
  return string.format('%s  [%d lines]', first, vim.v.foldend - vim.v.foldstart)
end

local function configure_window(win)
  local options = {
    foldmethod = 'expr',
    foldexpr = "v:lua.require'relavium.chat_buffer'.foldexpr(v:lnum)",
    foldtext = "v:lua.require'relavium.chat_buffer'.foldtext()",
    foldlevel = 0,
    foldenable = true,
    wrap = true,
    linebreak = true,
    number = false,
    relativenumber = false,
    signcolumn = 'no',
    list = false,
  }
  for name, value in pairs(options) do
    vim.wo[win][name] = value
  end
end

--- Markdown highlighting: Neovim's treesitter where it has the markdown parser (0.11 ships
--- it), with syntax/relavium.vim adding the chat's own lines; else that file alone, which
--- brings Vim's Markdown syntax too. Returns 'treesitter' or 'syntax'.
function M.highlight(bufnr)
  local started = vim.treesitter.start ~= nil and pcall(vim.treesitter.start, bufnr, 'markdown')
  -- treesitter.start turns regex syntax off; on again, the chat's own lines get their colours
  vim.bo[bufnr].syntax = 'relavium'
  return started and 'treesitter' or 'syntax'
end

--- A new, empty chat buffer (not shown yet).
function M.new(label)
  counter = counter + 1
  local bufnr = api.nvim_create_buf(true, true)
  api.nvim_buf_set_name(bufnr, string.format('relavium://chat/%d/%s', counter, label or 'new'))
  local options = {
    buftype = 'nofile',
    bufhidden = 'hide',
    swapfile = false,
    undolevels = -1, -- an append-only log needs no undo history
    modifiable = false,
  }
  for name, value in pairs(options) do
    vim.bo[bufnr][name] = value
  end
  fold_levels[bufnr] = {}
  local self = setmetatable({ bufnr = bufnr, empty = true, last_length = 0, footer = nil },
    ChatBuffer)
  api.nvim_create_autocmd('BufWinEnter', {
    buffer = bufnr,
    callback = function()
      configure_window(api.nvim_get_current_win())
    end,
  })
  api.nvim_create_autocmd('BufWipeout', {
    buffer = bufnr,
    callback = function()
      fold_levels[bufnr] = nil
    end,
  })
  vim.bo[bufnr].filetype = 'relavium'
  M.highlight(bufnr)
  return self
end

--- Whether the buffer still exists.
function ChatBuffer:is_valid()
  return api.nvim_buf_is_valid(self.bufnr)
end

--- Show the buffer: focus a window that shows it, else open one (`split` as in setup()).
function ChatBuffer:show(split, size)
  local windows = vim.fn.win_findbuf(self.bufnr)
  if #windows > 0 then
    api.nvim_set_current_win(windows[1])
    return windows[1]
  end
  if split == 'vertical' then
    vim.cmd((size and tostring(size) or '') .. 'vsplit')
  elseif split == 'horizontal' then
    vim.cmd((size and tostring(size) or '') .. 'split')
  elseif split == 'tab' then
    vim.cmd('tabnew')
  end
  local win = api.nvim_get_current_win()
  api.nvim_win_set_buf(win, self.bufnr)
  configure_window(win)
  return win
end

local function with_modifiable(bufnr, change)
  vim.bo[bufnr].modifiable = true
  local ok, err = pcall(change)
  vim.bo[bufnr].modifiable = false
  if not ok then
    error(err, 0)
  end
end

-- Windows whose cursor sat on the last line keep following the output.
local function following_windows(bufnr, last_line)
  local following = {}
  for _, win in ipairs(vim.fn.win_findbuf(bufnr)) do
    if api.nvim_win_get_cursor(win)[1] >= last_line then
      table.insert(following, win)
    end
  end
  return following
end

local function scroll_to_end(bufnr, windows)
  local last = api.nvim_buf_line_count(bufnr)
  for _, win in ipairs(windows) do
    if api.nvim_win_is_valid(win) then
      api.nvim_win_set_cursor(win, { last, 0 })
    end
  end
end

local function split_lines(text)
  return vim.split((text:gsub('\r\n?', '\n')), '\n', { plain = true })
end

--- Append whole lines. `fold`: nil (no fold) or 'block' (the first line starts a fold that
--- holds the rest).
--- Returns the 1-based number of the first appended line.
function ChatBuffer:append_lines(lines, fold)
  local bufnr = self.bufnr
  local count = api.nvim_buf_line_count(bufnr)
  local first = self.empty and 1 or count + 1
  local followers = following_windows(bufnr, count)
  -- Levels first: the buffer change below is what makes Neovim re-evaluate 'foldexpr'.
  local levels = fold_levels[bufnr]
  for index = 1, #lines do
    local lnum = first + index - 1
    if fold == 'block' then
      levels[lnum] = index == 1 and '>1' or 1
    else
      levels[lnum] = 0
    end
  end
  with_modifiable(bufnr, function()
    if self.empty then
      api.nvim_buf_set_lines(bufnr, 0, -1, false, lines)
    else
      api.nvim_buf_set_lines(bufnr, count, count, false, lines)
    end
  end)
  self.empty = false
  self.last_length = #lines[#lines]
  self:_place_footer()
  scroll_to_end(bufnr, followers)
  return first
end

--- Append streamed text at the end of the last line; newlines in `text` start new lines,
--- which belong to the open fold when `inside_fold` is true.
function ChatBuffer:stream(text, inside_fold)
  if text == '' then
    return
  end
  local bufnr = self.bufnr
  local parts = split_lines(text)
  if self.empty then
    self:append_lines({ '' })
  end
  local row = api.nvim_buf_line_count(bufnr) - 1
  local column = self.last_length
  local followers = following_windows(bufnr, row + 1)
  local levels = fold_levels[bufnr]
  for index = 2, #parts do
    levels[row + index] = inside_fold and 1 or 0
  end
  with_modifiable(bufnr, function()
    api.nvim_buf_set_text(bufnr, row, column, row, column, parts)
  end)
  if #parts == 1 then
    self.last_length = column + #parts[1]
  else
    self.last_length = #parts[#parts]
    self:_place_footer()
  end
  scroll_to_end(bufnr, followers)
end

--- Add `label` at the end of line `lnum` (a block's first line: its fate became known).
function ChatBuffer:mark(lnum, label)
  local bufnr = self.bufnr
  local count = api.nvim_buf_line_count(bufnr)
  if self.empty or lnum < 1 or lnum > count then
    return
  end
  local column = #api.nvim_buf_get_lines(bufnr, lnum - 1, lnum, false)[1]
  with_modifiable(bufnr, function()
    api.nvim_buf_set_text(bufnr, lnum - 1, column, lnum - 1, column, { label })
  end)
  if lnum == count then
    self.last_length = column + #label
  end
end

-- Keep the footer's virtual lines under the last line (an extmark stays on its own line).
function ChatBuffer:_place_footer()
  if self.footer == nil then
    return
  end
  local virtual = {}
  for _, line in ipairs(self.footer.lines) do
    table.insert(virtual, { { line, 'Comment' } })
  end
  self.footer.id = api.nvim_buf_set_extmark(self.bufnr, namespace,
    api.nvim_buf_line_count(self.bufnr) - 1, 0, { id = self.footer.id, virt_lines = virtual })
end

--- Show `lines` as virtual lines under the last line, following it as the buffer grows
--- (nil or none: remove them).
function ChatBuffer:set_footer(lines)
  if self.footer and self.footer.id then
    api.nvim_buf_del_extmark(self.bufnr, namespace, self.footer.id)
  end
  self.footer = (lines and #lines > 0) and { lines = lines } or nil
  self:_place_footer()
end

--- The footer's lines (none: an empty list).
function ChatBuffer:footer_lines()
  return self.footer and self.footer.lines or {}
end

--- Remove everything.
function ChatBuffer:clear()
  with_modifiable(self.bufnr, function()
    api.nvim_buf_set_lines(self.bufnr, 0, -1, false, {})
  end)
  fold_levels[self.bufnr] = {}
  self.empty = true
  self.last_length = 0
  self:_place_footer()
end

--- All lines (for tests and :RelaviumExport of the view).
function ChatBuffer:lines()
  return api.nvim_buf_get_lines(self.bufnr, 0, -1, false)
end

return M
