--- What the server asks of the user: approvals, and documents to open untitled.
local config = require('relavium.config')
local format = require('relavium.format')
local protocol = require('relavium.protocol')

local M = {}

local FILETYPES = { yaml = 'yaml', jsonl = 'json', json = 'json', markdown = 'markdown' }
local DECISION = protocol.APPROVAL_DECISION

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
    require('relavium.render').notice(chat, string.format('  → %s %s', decision,
      format.one_line(params.toolId, 80)))
  end
end

--- `relavium/requestApproval` handler: ask with vim.ui.select and answer the server.
---
--- A file change's diff opens first in a split (relavium.diff_view), whose keys answer too.
--- A server request must be answered from within this handler, so an asynchronous
--- vim.ui.select (a picker plugin) or the diff keys are waited for with vim.wait, at most
--- `approval_timeout_ms`; no answer (or a dismissed picker) is a rejection.
function M.request_approval(params)
  if type(params) ~= 'table' then
    return { decision = DECISION.REJECT }
  end
  local decision
  local view
  if type(params.diff) == 'table' and config.options.show_diffs then
    local ok, opened = pcall(require('relavium.diff_view').open, params, function(chosen)
      decision = decision or chosen
    end)
    view = ok and opened or nil
  end
  vim.ui.select(APPROVAL_CHOICES, {
    prompt = M.approval_prompt(params),
    kind = 'relavium_approval',
  }, function(choice)
    decision = decision or (choice and APPROVAL_DECISIONS[choice]) or DECISION.REJECT
  end)
  if decision == nil then
    vim.wait(config.options.approval_timeout_ms, function()
      return decision ~= nil
    end, 20)
  end
  require('relavium.diff_view').close(view)
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
