--- A proposed file change, shown before the user answers its approval.
---
--- The unified diff the server computed on the editor's text opens in a scratch split
--- (filetype `diff`) above the approval question. Its buffer-local keys answer the question
--- too: `a` approve, `A` always allow for this session, `r` or `q` reject.
local format = require('relavium.format')
local protocol = require('relavium.protocol')

local M = {}

local DECISION = protocol.APPROVAL_DECISION
M.KEYS = {
  a = DECISION.APPROVE,
  A = DECISION.APPROVE_ALWAYS,
  r = DECISION.REJECT,
  q = DECISION.REJECT,
}

--- The lines shown: a header with the keys, then the diff (its final newline dropped).
function M.lines(params)
  local diff = params.diff
  local stat = diff.stat or {}
  local lines = {
    string.format('Relavium wants to %s %s (+%d -%d lines)', diff.created and 'create' or 'change',
      format.one_line(diff.path, 200), stat.added or 0, stat.removed or 0),
    'a: approve   A: always allow for this session   r/q: reject',
  }
  local body = format.lines(diff.unified or '')
  if #body > 0 and body[#body] == '' then
    table.remove(body)
  end
  vim.list_extend(lines, body)
  return lines
end

--- Open the diff of `params` (a `relavium/requestApproval` with a `diff`) in a split.
--- `on_decision(decision)` runs when one of the keys is pressed. Returns a view for close().
function M.open(params, on_decision)
  local previous = vim.api.nvim_get_current_win()
  vim.cmd('botright new')
  local win = vim.api.nvim_get_current_win()
  local bufnr = vim.api.nvim_get_current_buf()
  vim.bo[bufnr].buftype = 'nofile'
  vim.bo[bufnr].bufhidden = 'wipe'
  vim.bo[bufnr].swapfile = false
  vim.api.nvim_buf_set_lines(bufnr, 0, -1, false, M.lines(params))
  vim.bo[bufnr].modifiable = false
  vim.bo[bufnr].filetype = 'diff'
  pcall(vim.api.nvim_buf_set_name, bufnr, 'relavium://diff/' .. tostring(params.callId or bufnr))
  for key, decision in pairs(M.KEYS) do
    vim.keymap.set('n', key, function()
      on_decision(decision)
    end, { buffer = bufnr, nowait = true, desc = 'Relavium: answer the approval' })
  end
  return { win = win, bufnr = bufnr, previous = previous }
end

--- Close the diff split and go back to the window that was current before it opened.
function M.close(view)
  if view == nil then
    return
  end
  if vim.api.nvim_win_is_valid(view.win) then
    pcall(vim.api.nvim_win_close, view.win, true)
  end
  if vim.api.nvim_win_is_valid(view.previous) then
    vim.api.nvim_set_current_win(view.previous)
  end
end

return M
