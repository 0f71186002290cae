--- Proposed workspace-memory changes (issue 35, docs/design.md §2.6).
---
--- An introspection checkpoint's notes for the workspace memory are in no prompt until the
--- user accepts them. A checkpoint that proposes is announced with `vim.notify`;
--- `:RelaviumMemoryProposals` lists the pending proposals with their diffs in a scratch
--- buffer, where `a` accepts and `r` rejects the proposal under the cursor
--- (`relavium/listMemoryProposals`, `relavium/decideMemoryProposal`).
local client = require('relavium.client')
local protocol = require('relavium.protocol')

local M = {}

local NAME = 'relavium://memory-proposals'
local state = { bufnr = nil, ids = {}, last_decision = nil }

local function notify(message, level)
  vim.notify('relavium: ' .. message, level or vim.log.levels.INFO)
end

--- A session event: announce a checkpoint that left a proposal.
function M.on_event(event)
  if type(event) == 'table' and event.type == protocol.EVENT_TYPE.SESSION_CHECKPOINT
    and type(event.memoryProposalId) == 'string' then
    notify('a checkpoint proposes notes for the workspace memory (not used until you accept'
      .. ' them): :RelaviumMemoryProposals')
  end
end

local function render(bufnr, proposals)
  local lines, ids = {}, {}
  if #proposals == 0 then
    lines = { 'No proposed changes to the workspace memory.' }
  end
  for _, proposal in ipairs(proposals) do
    table.insert(lines, string.format('# Proposal %s (from session %s, %s checkpoint)'
      .. '  a: accept  r: reject', proposal.id, tostring(proposal.sessionId), proposal.reason))
    ids[#lines] = proposal.id
    local shown = (proposal.diff and proposal.diff.unified) or proposal.text
    for _, line in ipairs(vim.split(shown, '\n', { plain = true })) do
      table.insert(lines, line)
      ids[#lines] = proposal.id
    end
    table.insert(lines, '')
  end
  vim.api.nvim_buf_set_option(bufnr, 'modifiable', true)
  vim.api.nvim_buf_set_lines(bufnr, 0, -1, false, lines)
  vim.api.nvim_buf_set_option(bufnr, 'modifiable', false)
  state.ids = ids
end

--- Load the pending proposals into the buffer.
function M.refresh(bufnr)
  client.request(protocol.LIST_MEMORY_PROPOSALS, { workingDir = client.root() }, function(err, result)
    if err then
      notify('could not list memory proposals: ' .. tostring(err.message), vim.log.levels.ERROR)
    elseif vim.api.nvim_buf_is_valid(bufnr) then
      render(bufnr, result.proposals or {})
    end
  end)
end

--- Accept or reject the proposal under the cursor.
function M.decide(decision)
  local id = state.ids[vim.api.nvim_win_get_cursor(0)[1]]
  if id == nil then
    notify('no proposal under the cursor', vim.log.levels.WARN)
    return
  end
  local bufnr = vim.api.nvim_get_current_buf()
  client.request(protocol.DECIDE_MEMORY_PROPOSAL, { proposalId = id, decision = decision },
    function(err, result)
      if err then
        notify('the proposal was not decided: ' .. tostring(err.message), vim.log.levels.ERROR)
        return
      end
      state.last_decision = result.proposal.status
      notify('proposal ' .. id .. ' ' .. result.proposal.status)
      M.refresh(bufnr)
    end)
end

--- `:RelaviumMemoryProposals`.
function M.open()
  if state.bufnr == nil or not vim.api.nvim_buf_is_valid(state.bufnr) then
    state.bufnr = vim.api.nvim_create_buf(true, true)
    vim.api.nvim_buf_set_name(state.bufnr, NAME)
    vim.api.nvim_buf_set_option(state.bufnr, 'filetype', 'diff')
    for key, decision in pairs({ a = 'accept', r = 'reject' }) do
      vim.api.nvim_buf_set_keymap(state.bufnr, 'n', key, '', {
        noremap = true,
        callback = function()
          M.decide(decision)
        end,
      })
    end
  end
  vim.api.nvim_set_current_buf(state.bufnr)
  M.refresh(state.bufnr)
  return state.bufnr
end

--- What tests read.
function M.state()
  return state
end

return M
