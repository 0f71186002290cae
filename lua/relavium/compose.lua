--- The composer: a small buffer under the chat to write a message in, with completion.
---
--- `i` in a chat opens it. `<CR>` in normal mode or `<C-s>` sends; `<Up>` in normal mode
--- recalls the last message. Its 'completefunc' (`<C-x><C-u>`) completes `@` workspace files,
--- `#selection` / `#file` and, at the start, `/` slash commands. On send, `@path` attaches
--- that file, `#selection` the last visual selection of the window the chat was opened from,
--- `#file` that window's whole file — as extra text parts of the message (the same format the
--- VS Code extension uses, so either editor shows them as attachments).
local M = {}

local api = vim.api
local MAX_FILES = 50
local MAX_ATTACHMENT_CHARS = 50000

--- Slash commands and what they do (see chat_actions.lua).
M.SLASH_COMMANDS = {
  new = 'start a new chat with the same agent',
  fork = 'fork this chat at its last message',
  compact = 'summarise older messages for the model',
  export = 'export this chat as a workflow',
  clear = 'start a new chat with the default agent and model',
  retry = 'send the last message again in a fork before it',
  edit = 'edit the last message in a fork before it',
  model = 'pick the model for the next turns',
}

local composers = {} -- bufnr -> { chat, source }
local counter = 0

local function root()
  local options = require('relavium.config').options
  return options.root or vim.fn.getcwd()
end

--- Workspace files whose path contains `query` (git's list when there is one).
function M.workspace_files(query)
  local dir = root()
  local files = vim.fn.systemlist({ 'git', '-C', dir, 'ls-files', '--cached', '--others',
    '--exclude-standard' })
  if vim.v.shell_error ~= 0 then
    files = {}
    for _, path in ipairs(vim.fn.globpath(dir, '**/*', false, true)) do
      if vim.fn.isdirectory(path) == 0 then
        table.insert(files, path:sub(#dir + 2))
      end
    end
  end
  local wanted = (query or ''):lower()
  local found = {}
  for _, path in ipairs(files) do
    if path:lower():find(wanted, 1, true) then
      table.insert(found, path)
      if #found >= MAX_FILES then
        break
      end
    end
  end
  table.sort(found, function(a, b)
    return #a < #b
  end)
  return found
end

--- Where the completion starts on `before` (the line up to the cursor), 1-based, or nil.
function M.completion_start(before)
  if before:match('^/[%w]*$') then
    return 1
  end
  local start = before:find('[@#][%w%._%-/]*$')
  if start and (start == 1 or before:sub(start - 1, start - 1):match('%s')) then
    return start
  end
  return nil
end

--- The candidates for `base` (the text from the trigger character to the cursor).
function M.candidates(base)
  local sigil, query = base:sub(1, 1), base:sub(2)
  local items = {}
  if sigil == '/' then
    local names = vim.tbl_keys(M.SLASH_COMMANDS)
    table.sort(names)
    for _, name in ipairs(names) do
      if name:sub(1, #query) == query then
        table.insert(items, { word = '/' .. name, menu = M.SLASH_COMMANDS[name] })
      end
    end
  elseif sigil == '#' then
    for _, name in ipairs({ 'selection', 'file' }) do
      if name:sub(1, #query) == query then
        table.insert(items, { word = '#' .. name, menu = 'attach the ' .. name })
      end
    end
  elseif sigil == '@' then
    for _, path in ipairs(M.workspace_files(query)) do
      table.insert(items, { word = '@' .. path, menu = 'attach file' })
    end
  end
  return items
end

--- 'completefunc' of composer buffers.
function M.complete(findstart, base)
  if findstart == 1 then
    local line = api.nvim_get_current_line()
    local col = api.nvim_win_get_cursor(0)[2]
    local start = M.completion_start(line:sub(1, col))
    return start and start - 1 or -3
  end
  return M.candidates(base)
end

-- Options take a function name; `v:lua.` names a global one in every supported version.
_G.relavium_compose_complete = M.complete

local function fence_for(text)
  local fence = '```'
  while text:find(fence, 1, true) do
    fence = fence .. '`'
  end
  return fence
end

--- The text part an attachment travels as (first line: the header both clients recognise).
function M.attachment(kind, path, language, text, first, last)
  if #text > MAX_ATTACHMENT_CHARS then
    text = text:sub(1, MAX_ATTACHMENT_CHARS) .. '\n… (cut)'
  end
  local range = first and string.format(' lines %d-%d', first, last) or ''
  local fence = fence_for(text)
  return {
    type = 'text',
    text = string.format('Attached %s: %s%s\n%s%s\n%s\n%s', kind, path, range, fence,
      language or '', text, fence),
  }
end

--- One line naming what a message carries ("attached: a.py:1-3, README.md").
function M.attachment_summary(attachments)
  local names = {}
  for _, part in ipairs(attachments) do
    local kind, path, first, last = (part.text or ''):match(
      '^Attached (%a+): (.-) lines (%d+)%-(%d+)\n')
    if not kind then
      kind, path = (part.text or ''):match('^Attached (%a+): ([^\n]+)\n')
    end
    if path then
      table.insert(names, first and string.format('%s:%s-%s', path, first, last) or path)
    end
  end
  return '  📎 attached: ' .. table.concat(names, ', ')
end

local function relative(path)
  local dir = root()
  if path:sub(1, #dir + 1) == dir .. '/' then
    return path:sub(#dir + 2)
  end
  return vim.fn.fnamemodify(path, ':t')
end

-- The attachments a message's mentions ask for.
local function attachments_of(text, source)
  local parts = {}
  for path in text:gmatch('%f[%S]@([%w%._%-/]+)') do
    local full = root() .. '/' .. path
    if vim.fn.filereadable(full) == 1 then
      local lines = vim.fn.readfile(full)
      table.insert(parts, M.attachment('file', path, vim.fn.fnamemodify(path, ':e'),
        table.concat(lines, '\n')))
    end
  end
  local buf = source and source.buf
  if buf and api.nvim_buf_is_valid(buf) then
    local name = relative(api.nvim_buf_get_name(buf))
    local filetype = vim.bo[buf].filetype
    if text:find('%f[%S]#selection') then
      local first = api.nvim_buf_get_mark(buf, '<')[1]
      local last = api.nvim_buf_get_mark(buf, '>')[1]
      if first > 0 and last >= first then
        local lines = api.nvim_buf_get_lines(buf, first - 1, last, false)
        table.insert(parts, M.attachment('selection', name, filetype, table.concat(lines, '\n'),
          first, last))
      end
    end
    if text:find('%f[%S]#file') then
      local lines = api.nvim_buf_get_lines(buf, 0, -1, false)
      table.insert(parts, M.attachment('file', name, filetype, table.concat(lines, '\n')))
    end
  end
  return parts
end

--- Run what the composer holds: a slash command, or a message with its attachments.
function M.run(chat, text, source)
  local actions = require('relavium.chat_actions')
  local command = text:match('^/(%a+)%s*$')
  if command and M.SLASH_COMMANDS[command] then
    actions.slash(chat, command)
    return
  end
  if text:match('^%s*$') then
    return
  end
  require('relavium.chat').send(text, chat, attachments_of(text, source))
end

-- The window the user came from: the source of #selection / #file.
local function source_of()
  local win = api.nvim_get_current_win()
  local buf = api.nvim_win_get_buf(win)
  if vim.bo[buf].filetype == 'relavium' then
    -- opened from the chat: the previous window holds the code
    local previous = vim.fn.win_getid(vim.fn.winnr('#'))
    if previous ~= 0 and api.nvim_win_is_valid(previous) then
      buf = api.nvim_win_get_buf(previous)
    else
      return nil
    end
  end
  return { buf = buf }
end

--- Send what composer buffer `bufnr` holds and close it.
function M.submit(bufnr)
  local state = composers[bufnr]
  if not state then
    return
  end
  local text = table.concat(api.nvim_buf_get_lines(bufnr, 0, -1, false), '\n')
  text = text:gsub('^%s+', ''):gsub('%s+$', '')
  composers[bufnr] = nil
  vim.cmd('stopinsert')
  for _, win in ipairs(vim.fn.win_findbuf(bufnr)) do
    api.nvim_win_close(win, true)
  end
  M.run(state.chat, text, state.source)
end

--- Open a composer for `chat` (with `text` in it, e.g. a message to edit).
function M.open(chat, text)
  local source = source_of()
  counter = counter + 1
  local bufnr = api.nvim_create_buf(false, true)
  api.nvim_buf_set_name(bufnr, 'relavium://compose/' .. counter)
  vim.bo[bufnr].buftype = 'nofile'
  vim.bo[bufnr].bufhidden = 'wipe'
  vim.bo[bufnr].swapfile = false
  vim.bo[bufnr].filetype = 'relavium_compose'
  vim.bo[bufnr].completefunc = 'v:lua.relavium_compose_complete'
  composers[bufnr] = { chat = chat, source = source }
  if chat and chat.buffer:is_valid() then
    chat.buffer:show(require('relavium.config').options.chat_split)
  end
  vim.cmd('belowright 4split')
  api.nvim_win_set_buf(0, bufnr)
  if text and text ~= '' then
    api.nvim_buf_set_lines(bufnr, 0, -1, false, vim.split(text, '\n', { plain = true }))
  end
  local map = function(mode, lhs, fn, desc)
    vim.keymap.set(mode, lhs, fn, { buffer = bufnr, desc = 'Relavium: ' .. desc })
  end
  map('n', '<CR>', function()
    M.submit(bufnr)
  end, 'send the message')
  map({ 'n', 'i' }, '<C-s>', function()
    M.submit(bufnr)
  end, 'send the message')
  map('n', '<Up>', function()
    local empty = table.concat(api.nvim_buf_get_lines(bufnr, 0, -1, false), '') == ''
    if empty and chat and chat.last_user then
      api.nvim_buf_set_lines(bufnr, 0, -1, false,
        vim.split(chat.last_user.text, '\n', { plain = true }))
    else
      vim.cmd('normal! k')
    end
  end, 'recall the last message')
  vim.cmd('startinsert!')
  return bufnr
end

return M
