--- What the server asks of the user: approvals, and documents to open untitled.
local config = require('relavium.config')
local format = require('relavium.format')
local protocol = require('relavium.protocol')

local M = {}

local FILETYPES = { yaml = 'yaml', jsonl = 'json', json = 'json', markdown = 'markdown' }
local DECISION = protocol.APPROVAL_DECISION

-- Questions being asked: each { session_id, cancelled, wake }. A question the server no
-- longer waits for (its turn ended, or the server exited) is cancelled: the wait ends.
local asking = {}

--- Approval choices shown to the user, in order, and the decision each one sends.
local APPROVAL_CHOICES = { 'Approve', 'Reject', 'Always allow for this session' }
local APPROVAL_DECISIONS = {
  ['Approve'] = DECISION.APPROVE,
  ['Reject'] = DECISION.REJECT,
  ['Always allow for this session'] = DECISION.APPROVE_ALWAYS,
}

--- The question shown for an approval request.
function M.approval_prompt(params)
  local target = format.preview_target(params.preview)
  return string.format('Relavium wants to run %s (%s)%s', format.one_line(params.toolId, 80),
    format.one_line(params.action, 40), target ~= '' and (': ' .. format.one_line(target)) or '')
end

local function record_in_chat(params, decision)
  local chat = require('relavium.chat').for_session(params.sessionId)
  if chat and chat.buffer:is_valid() then
    require('relavium.render').approval_answered(chat, params.callId, decision, params.toolId)
  end
end

--- Stop waiting for the answers to `session_id`'s questions (nil: every session's); their
--- diff views close and any later answer is ignored.
function M.cancel_approvals(session_id)
  for question in pairs(asking) do
    if session_id == nil or question.session_id == session_id then
      question.cancelled = true
      question.wake()
    end
  end
end

-- Wait until `done()` is true, at most `timeout_ms`. Where Neovim runs the request handler in
-- a coroutine (0.11), the coroutine yields and Neovim stays responsive: the user can read,
-- press the diff split's keys, or abort from the chat; `question.wake()` resumes it. Where
-- it does not (0.7), vim.wait — which runs scheduled callbacks, but not typed keys.
local function wait_for_answer(question, timeout_ms, done)
  local co = coroutine.running()
  if not co then
    vim.wait(timeout_ms, done, 20)
    return
  end
  local timer = (vim.uv or vim.loop).new_timer()
  local waiting = true
  question.wake = function()
    if waiting then
      waiting = false
      timer:stop()
      timer:close()
      vim.schedule(function()
        coroutine.resume(co)
      end)
    end
  end
  timer:start(timeout_ms, 0, question.wake)
  coroutine.yield() -- nothing can have answered yet: the caller saw no decision just now
end

--- `relavium/requestApproval` handler: ask with vim.ui.select and answer the server.
---
--- A file change's diff opens first in a split (relavium.diff_view), whose keys answer too.
--- A server request must be answered from within this handler, so an asynchronous
--- vim.ui.select (a picker plugin) or the diff keys are waited for (`wait_for_answer`), at
--- most `approval_timeout_ms`; no answer (or a dismissed picker) is a rejection. The wait
--- also ends when the question is cancelled (`cancel_approvals`): the turn was aborted or
--- the server went away, and nobody waits for the answer any more.
function M.request_approval(params)
  if type(params) ~= 'table' then
    return { decision = DECISION.REJECT }
  end
  local question = { session_id = params.sessionId, cancelled = false, wake = function() end }
  asking[question] = true
  local decision
  local view
  local function answer(chosen)
    decision = decision or chosen
    question.wake()
  end
  if type(params.diff) == 'table' and config.options.show_diffs then
    local ok, opened = pcall(require('relavium.diff_view').open, params, answer)
    view = ok and opened or nil
  end
  vim.ui.select(APPROVAL_CHOICES, {
    prompt = M.approval_prompt(params),
    kind = 'relavium_approval',
  }, function(choice)
    answer((choice and APPROVAL_DECISIONS[choice]) or DECISION.REJECT)
  end)
  if decision == nil then
    wait_for_answer(question, config.options.approval_timeout_ms, function()
      return decision ~= nil or question.cancelled
    end)
  end
  asking[question] = nil
  require('relavium.diff_view').close(view)
  if question.cancelled then
    return { decision = DECISION.REJECT } -- nobody waits for it; the chat says Cancelled
  end
  decision = decision or DECISION.REJECT
  record_in_chat(params, decision)
  return { decision = decision }
end

--- Open `content` in a new unnamed buffer in a split; saving it is the user's act.
--- `suggested_name` is kept in `b:relavium_suggested_name`.
function M.open_scratch(content, language, suggested_name)
  vim.cmd('new')
  local bufnr = vim.api.nvim_get_current_buf()
  local lines = format.lines(content)
  if #lines > 1 and lines[#lines] == '' then
    table.remove(lines) -- the final newline is the buffer's 'eol', not an extra line
  end
  vim.api.nvim_buf_set_lines(bufnr, 0, -1, false, lines)
  local filetype = FILETYPES[language] or language or ''
  if not filetype:match('^[%w_]*$') then
    filetype = '' -- a filetype names runtime files: never take an odd one from the wire
  end
  vim.bo[bufnr].filetype = filetype
  if suggested_name then
    vim.api.nvim_buf_set_var(bufnr, 'relavium_suggested_name', suggested_name)
  end
  return bufnr
end

--- `relavium/openUntitled` handler.
function M.open_untitled(params)
  if type(params) ~= 'table' or type(params.content) ~= 'string' then
    return { opened = false }
  end
  local ok = pcall(M.open_scratch, params.content, params.language, params.title)
  return { opened = ok }
end

return M
