--- `:RelaviumChanges`: review what one turn changed, file by file (docs/design.md §6.4).
---
--- The files of a turn (default: the chat's latest turn that changed any) fill the quickfix
--- list, one entry per file with its +/− line counts and its review state. In the quickfix
--- window `<CR>` opens the file's diff against the turn's checkpoint (relavium.review_diff),
--- `a` keeps the file, `u` undoes it (a rewind of that file only: the server puts the text
--- back through workspace/applyEdit, so `u` in the file takes it back; a file the user
--- changed since is a conflict and left alone), `A` / `U` keep or undo every file. The list
--- is refreshed after each decision. The quickfix window serves other lists too: the keys
--- act only while it shows a Relavium review, and do what they always do otherwise.
local chat_module = require('relavium.chat')
local client = require('relavium.client')
local format = require('relavium.format')
local protocol = require('relavium.protocol')
local render = require('relavium.render')

local M = {}

local DECISION = protocol.REVIEW_DECISION
local STATE = protocol.REVIEW_STATE
local CONTEXT_KEY = 'relavium_review'

M.KEYS = {
  a = { decision = DECISION.KEEP, all = false },
  u = { decision = DECISION.UNDO, all = false },
  A = { decision = DECISION.KEEP, all = true },
  U = { decision = DECISION.UNDO, all = true },
}

--- "+3 −1" for a file (a created file: "new +3", a deleted one: "deleted −4").
function M.counts(file)
  local counts = string.format('+%d −%d', file.added or 0, file.removed or 0)
  if file.created then
    return 'new ' .. counts
  elseif file.deleted then
    return 'deleted ' .. counts
  end
  return counts
end

--- "2 files changed +5 −1" for a turn's files.
function M.summary(files)
  local added, removed = 0, 0
  for _, file in ipairs(files) do
    added = added + (file.added or 0)
    removed = removed + (file.removed or 0)
  end
  return string.format('%d file%s changed +%d −%d', #files, #files == 1 and '' or 's', added,
    removed)
end

--- The absolute path of a file the server names relative to the session's workspace.
function M.full_path(chat, path)
  if path:sub(1, 1) == '/' then
    return path
  end
  return (chat.working_dir or client.root()) .. '/' .. path
end

--- The quickfix entries of a turn's files.
function M.items(chat, files)
  local items = {}
  for _, file in ipairs(files) do
    table.insert(items, {
      filename = M.full_path(chat, file.path),
      lnum = 1,
      col = 1,
      text = string.format('%s · %s', M.counts(file), file.review),
    })
  end
  return items
end

--- The review the quickfix list holds, or nil when it holds something else.
function M.current()
  local list = vim.fn.getqflist({ context = 0, idx = 0 })
  local context = type(list.context) == 'table' and list.context[CONTEXT_KEY] or nil
  if type(context) ~= 'table' then
    return nil
  end
  return context, list.idx
end

local function title(review)
  return string.format('Relavium: %s · the turn of message %d', M.summary(review.files),
    review.userSequence)
end

-- Put `review` in the quickfix list: a new list, or (`replace`) the same one refreshed.
local function fill(chat, review, replace)
  local what = {
    title = title(review),
    items = M.items(chat, review.files),
    context = { [CONTEXT_KEY] = review },
  }
  if replace then
    local _, idx = M.current()
    what.idx = idx
    vim.fn.setqflist({}, 'r', what)
  else
    vim.fn.setqflist({}, ' ', what)
  end
end

local function fetch(chat, user_sequence, done)
  local params = { sessionId = chat.session_id, userSequence = user_sequence }
  client.request(protocol.TURN_CHANGES, params, function(err, result)
    if err or type(result) ~= 'table' or type(result.files) ~= 'table' then
      done(nil, err or { message = 'no result' })
      return
    end
    done({ sessionId = chat.session_id, userSequence = result.userSequence,
      files = result.files })
  end)
end

local function chat_of(review)
  return review and chat_module.for_session(review.sessionId) or nil
end

-- The key `key` of the quickfix window: the review's action, or the key's own meaning.
local function press(key, action)
  if M.current() then
    action()
  else
    vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes(key, true, false, true), 'n', false)
  end
end

local function map_keys(bufnr)
  local function map(key, action, desc)
    vim.keymap.set('n', key, function()
      press(key, action)
    end, { buffer = bufnr, nowait = true, desc = 'Relavium review: ' .. desc })
  end
  map('<CR>', function()
    M.open_diff(vim.fn.line('.'))
  end, "the file's diff against the turn's checkpoint")
  for key, what in pairs(M.KEYS) do
    map(key, function()
      M.decide_at(what.decision, not what.all and vim.fn.line('.') or nil)
    end, string.format('%s %s', what.decision, what.all and 'every file' or 'this file'))
  end
end

--- Show the review in the quickfix window (opened at the bottom).
function M.show(chat, review)
  fill(chat, review, false)
  vim.cmd('botright copen')
  map_keys(vim.api.nvim_get_current_buf())
end

--- `:RelaviumChanges [message]`: the files the current chat's latest turn (or the turn of
--- user message `user_sequence`) changed, in the quickfix list.
function M.open(user_sequence)
  local chat = chat_module.current()
  if not chat or not chat.session_id then
    vim.notify('relavium: no chat session to review', vim.log.levels.WARN)
    return
  end
  fetch(chat, user_sequence, function(review, err)
    if not review then
      render.request_error(chat, err)
    elseif #review.files == 0 then
      vim.notify('relavium: no turn of this chat changed files', vim.log.levels.INFO)
    else
      M.show(chat, review)
    end
  end)
end

--- After a turn of `chat` that ran tools: one line in the chat naming what it changed
--- ("2 files changed +5 −1"), nothing when it changed nothing; then `done()`.
function M.summarize(chat, user_sequence, done)
  fetch(chat, user_sequence, function(review)
    if review and #review.files > 0 and chat.buffer:is_valid() then
      render.notice(chat, string.format('  %s · :RelaviumChanges to review, keep or undo',
        M.summary(review.files)))
    end
    done()
  end)
end

--- What a review did, in one line for vim.notify (conflicts and refusals named).
function M.outcome(result)
  local parts = {}
  local function add(label, items)
    if type(items) == 'table' and #items > 0 then
      table.insert(parts, label .. ' ' .. table.concat(items, ', '))
    end
  end
  add('kept', result.kept)
  add('restored', result.restored)
  add('deleted', result.deleted)
  add('already as before', result.unchanged)
  for _, problem in ipairs(result.conflicts or {}) do
    table.insert(parts, string.format('conflict: %s %s', problem.path, problem.reason))
  end
  for _, problem in ipairs(result.failed or {}) do
    table.insert(parts, string.format('not restored: %s (%s)', problem.path, problem.reason))
  end
  return 'relavium: ' .. (#parts > 0 and table.concat(parts, '; ') or 'nothing to do')
end

--- Keep or undo the review's file `path` (nil: every file), then refresh the list.
function M.decide(review, decision, path)
  local chat = chat_of(review)
  if not chat then
    vim.notify('relavium: the chat of this review is closed', vim.log.levels.WARN)
    return
  end
  local params = { sessionId = review.sessionId, userSequence = review.userSequence,
    decision = decision, paths = path and { path } or nil }
  client.request(protocol.REVIEW_CHANGES, params, function(err, result)
    if err or type(result) ~= 'table' then
      vim.notify('relavium: ' .. format.one_line((err or {}).message or 'no result'),
        vim.log.levels.ERROR)
      return
    end
    local troubled = #(result.conflicts or {}) + #(result.failed or {}) > 0
    vim.notify(M.outcome(result), troubled and vim.log.levels.WARN or vim.log.levels.INFO)
    M.refresh(review)
  end)
end

--- Keep or undo the file of quickfix entry `index` (nil: every file of the review).
function M.decide_at(decision, index)
  local review = M.current()
  if not review then
    return
  end
  local file = index and review.files[index] or nil
  if index and not file then
    return
  end
  M.decide(review, decision, file and file.path or nil)
end

--- Ask the server for the review's files again and update the quickfix list (when it
--- still shows this review).
function M.refresh(review)
  local chat = chat_of(review)
  if not chat then
    return
  end
  fetch(chat, review.userSequence, function(fresh)
    local shown = M.current()
    if fresh and shown and shown.sessionId == review.sessionId
      and shown.userSequence == review.userSequence then
      fill(chat, fresh, true)
    end
  end)
end

--- Open the diff of quickfix entry `index` against the turn's checkpoint.
function M.open_diff(index)
  local review = M.current()
  local file = review and review.files[index]
  local chat = chat_of(review)
  if not file or not chat then
    return
  end
  client.request(protocol.CHECKPOINT_CONTENT, { sessionId = review.sessionId,
    userSequence = review.userSequence, path = file.path }, function(err, result)
    if err or type(result) ~= 'table' then
      vim.notify('relavium: ' .. format.one_line((err or {}).message or 'no checkpoint'),
        vim.log.levels.ERROR)
      return
    end
    require('relavium.review_diff').open({
      review = review,
      file = file,
      full_path = M.full_path(chat, file.path),
      before = result.existed and result.content or nil,
    })
  end)
end

return M
