--- Live output of the agent's commands (`agent:tool_output`) in scratch buffers.
---
--- Every chat feeds its events here; the pieces of each call's output are kept (a few recent
--- calls only) so `:RelaviumOutput` can open a call's buffer at any time, and a buffer that is
--- open grows while the command runs. The tool's result marks the end of the output.
local protocol = require('relavium.protocol')

local EVENT = protocol.EVENT_TYPE
local M = {}

local MAX_CALLS = 20 -- recent calls whose output is kept

local calls = {} -- callId -> { lines = {...}, bufnr = n?, done = bool }
local order = {} -- callIds, oldest first
local latest = nil -- callId of the last call that produced output

local function split_lines(text)
  local lines = {}
  local start = 1
  while true do
    local stop = string.find(text, '\n', start, true)
    if not stop then
      table.insert(lines, string.sub(text, start))
      return lines
    end
    table.insert(lines, string.sub(text, start, stop - 1))
    start = stop + 1
  end
end

local function forget_oldest()
  while #order > MAX_CALLS do
    local old = table.remove(order, 1)
    local record = calls[old]
    calls[old] = nil
    if record and record.bufnr and vim.api.nvim_buf_is_valid(record.bufnr) then
      vim.api.nvim_buf_delete(record.bufnr, { force = true })
    end
  end
end

local function record_for(call_id)
  local record = calls[call_id]
  if not record then
    record = { lines = { '' }, done = false }
    calls[call_id] = record
    table.insert(order, call_id)
    forget_oldest()
  end
  return record
end

local function buffer_of(record)
  if record.bufnr and vim.api.nvim_buf_is_valid(record.bufnr) then
    return record.bufnr
  end
  return nil
end

-- Write the record's lines from `first` on into its open buffer; windows on it follow the end.
local function sync(record, first)
  local bufnr = buffer_of(record)
  if not bufnr then
    return
  end
  local replaced = {}
  for index = first, #record.lines do
    table.insert(replaced, record.lines[index])
  end
  vim.api.nvim_buf_set_option(bufnr, 'modifiable', true)
  vim.api.nvim_buf_set_lines(bufnr, first - 1, -1, false, replaced)
  vim.api.nvim_buf_set_option(bufnr, 'modifiable', false)
  local last = vim.api.nvim_buf_line_count(bufnr)
  for _, win in ipairs(vim.api.nvim_list_wins()) do
    if vim.api.nvim_win_get_buf(win) == bufnr then
      vim.api.nvim_win_set_cursor(win, { last, 0 })
    end
  end
end

-- Append a piece of output: it continues the last (unfinished) line.
local function append(record, text)
  local first = #record.lines
  local pieces = split_lines((string.gsub(text, '\r', '')))
  record.lines[first] = record.lines[first] .. pieces[1]
  for index = 2, #pieces do
    table.insert(record.lines, pieces[index])
  end
  sync(record, first)
end

--- Feed one session event (called by every chat with each applied event).
function M.on_event(event)
  if type(event) ~= 'table' or type(event.callId) ~= 'string' then
    return
  end
  if event.type == EVENT.AGENT_TOOL_OUTPUT then
    local record = record_for(event.callId)
    if record.done then
      return -- a resumed session replays a call that is already complete here
    end
    latest = event.callId
    append(record, type(event.text) == 'string' and event.text or '')
    if event.truncated then
      append(record, '\n… (output cut here; the rest is in the tool result)\n')
    end
  elseif event.type == EVENT.AGENT_TOOL_RESULT and calls[event.callId] then
    local record = calls[event.callId]
    if not record.done then
      record.done = true
      local last = record.lines[#record.lines]
      local mark = event.success == false and '── failed ──' or '── done ──'
      append(record, (last == '' and '' or '\n') .. mark)
    end
  end
end

--- The callId of the latest command with output, if any.
function M.latest()
  return latest
end

--- Show a call's output (default: the latest) in a scratch buffer `relavium://output/<callId>`.
function M.open(call_id)
  if call_id == nil or call_id == '' then
    call_id = latest
  end
  local record = call_id and calls[call_id]
  if not record then
    vim.notify('relavium: no command output yet', vim.log.levels.INFO)
    return nil
  end
  local bufnr = buffer_of(record)
  if not bufnr then
    bufnr = vim.api.nvim_create_buf(false, true)
    vim.api.nvim_buf_set_name(bufnr, 'relavium://output/' .. call_id)
    vim.api.nvim_buf_set_option(bufnr, 'buftype', 'nofile')
    vim.api.nvim_buf_set_option(bufnr, 'bufhidden', 'hide')
    vim.api.nvim_buf_set_option(bufnr, 'swapfile', false)
    vim.api.nvim_buf_set_option(bufnr, 'filetype', 'relavium-output')
    record.bufnr = bufnr
    sync(record, 1)
  end
  local win = vim.fn.bufwinid(bufnr)
  if win ~= -1 then
    vim.api.nvim_set_current_win(win)
  else
    vim.cmd('botright split')
    vim.api.nvim_win_set_buf(0, bufnr)
  end
  vim.api.nvim_win_set_cursor(0, { vim.api.nvim_buf_line_count(bufnr), 0 })
  return bufnr
end

--- Call ids with kept output, oldest first (for completion).
function M.call_ids()
  return vim.deepcopy(order)
end

return M
