--- What a chat can do besides sending: pick the agent or model, retry or edit the last
--- message (in a fork, so the first version stays reachable), slash commands, and yanking a
--- code block from an answer.
local chat_module = require('relavium.chat')
local client = require('relavium.client')
local protocol = require('relavium.protocol')
local render = require('relavium.render')

local M = {}

local function failed(chat, err)
  if chat and chat.buffer:is_valid() then
    render.request_error(chat, err or { message = 'no result' })
  else
    vim.notify('relavium: ' .. tostring((err or {}).message or err), vim.log.levels.ERROR)
  end
end

local function need_session(chat)
  if not chat or not chat.session_id then
    vim.notify('relavium: no chat session here', vim.log.levels.WARN)
    return false
  end
  return true
end

--- Ask `model` (a choice id `provider/model`, or a bare model name) first from the next turn.
function M.set_model(chat, model, done)
  if not need_session(chat) then
    return
  end
  if not model:find('/', 1, true) then
    -- A bare name: the session's choice of that name.
    client.request(protocol.SESSION_MODELS, { sessionId = chat.session_id }, function(err, result)
      for _, choice in ipairs(type(result) == 'table' and result.choices or {}) do
        if choice.model == model then
          M.set_model(chat, choice.id, done)
          return
        end
      end
      failed(chat, err or { message = 'unknown model ' .. model })
    end)
    return
  end
  client.request(protocol.SET_MODEL, { sessionId = chat.session_id, model = model },
    function(err, result)
      if err or type(result) ~= 'table' or type(result.current) ~= 'table' then
        failed(chat, err)
        return
      end
      chat.model = result.current.model
      render.notice(chat, string.format('── model → %s (from the next turn) ──',
        result.current.model))
      if done then
        done(result.current)
      end
    end)
end

--- `:RelaviumModel`: pick the chat's model with vim.ui.select.
function M.pick_model(chat)
  if not need_session(chat) then
    return
  end
  client.request(protocol.SESSION_MODELS, { sessionId = chat.session_id }, function(err, result)
    if err or type(result) ~= 'table' then
      failed(chat, err)
      return
    end
    vim.ui.select(result.choices or {}, {
      prompt = 'Model for the next turns',
      kind = 'relavium_model',
      format_item = function(choice)
        local current = result.current and choice.id == result.current.id
        return string.format('%s (on %s)%s', choice.model, choice.provider,
          current and ' · current' or '')
      end,
    }, function(choice)
      if choice then
        M.set_model(chat, choice.id)
      end
    end)
  end)
end

--- `:RelaviumAgent`: pick an agent with vim.ui.select and open a new chat with it.
function M.pick_agent(done)
  client.request(protocol.LIST_AGENTS, vim.empty_dict(), function(err, result)
    if err or type(result) ~= 'table' then
      failed(nil, err)
      return
    end
    vim.ui.select(result.agents or {}, {
      prompt = 'Agent for a new chat',
      kind = 'relavium_agent',
      format_item = function(agent)
        return string.format('%s — %s', agent.id, agent.description or '')
      end,
    }, function(agent)
      if agent then
        local chat = chat_module.open(agent.id)
        if done then
          done(chat)
        end
      end
    end)
  end)
end

-- Continue from just before the last user message: a fork holding what came before it, or
-- (for a first message) a new chat with the same agent. `then_do(new_chat, text)`.
local function branch_before_last(chat, then_do)
  if not need_session(chat) then
    return
  end
  local last = chat.last_user
  if not last or not last.sequence then
    vim.notify('relavium: no sent message to retry or edit yet', vim.log.levels.WARN)
    return
  end
  if chat.busy then
    vim.notify('relavium: a turn is running; abort it first', vim.log.levels.WARN)
    return
  end
  if last.sequence <= 1 then
    then_do(chat_module.open(chat.agent), last.text)
    return
  end
  client.request(protocol.FORK_SESSION, { sessionId = chat.session_id,
    atSequence = last.sequence - 1 }, function(err, result)
    if err or type(result) ~= 'table' then
      failed(chat, err)
      return
    end
    local fork = require('relavium.sessions').resume(result.sessionId)
    if fork then
      render.notice(fork, '── forked before your last message; the earlier chat stays listed ──')
      then_do(fork, last.text)
    end
  end)
end

--- `:RelaviumRetry`: send the last message again, in a fork before it.
function M.retry(chat)
  branch_before_last(chat, function(fork, text)
    chat_module.send(text, fork) -- queued until the fork is bound
  end)
end

--- `:RelaviumEdit`: put the last message in a composer, in a fork before it.
function M.edit(chat)
  branch_before_last(chat, function(fork, text)
    require('relavium.compose').open(fork, text)
  end)
end

--- Fork at the newest message.
function M.fork(chat)
  if not need_session(chat) then
    return
  end
  client.request(protocol.GET_TRANSCRIPT, { sessionId = chat.session_id, limit = 1 },
    function(err, result)
      local last = type(result) == 'table' and (result.messages or {})[1]
      if err or not last then
        failed(chat, err or { message = 'nothing to fork yet' })
        return
      end
      client.request(protocol.FORK_SESSION, { sessionId = chat.session_id,
        atSequence = last.sequenceNumber }, function(fork_err, fork)
        if fork_err or type(fork) ~= 'table' then
          failed(chat, fork_err)
          return
        end
        require('relavium.sessions').resume(fork.sessionId)
      end)
    end)
end

--- Run a slash command of the composer.
function M.slash(chat, name)
  if name == 'new' then
    chat_module.open(chat and chat.agent)
  elseif name == 'clear' then
    chat_module.open(nil)
  elseif name == 'fork' then
    M.fork(chat)
  elseif name == 'retry' then
    M.retry(chat)
  elseif name == 'edit' then
    M.edit(chat)
  elseif name == 'model' then
    M.pick_model(chat)
  elseif name == 'export' then
    require('relavium.sessions').export('workflow')
  elseif name == 'compact' and need_session(chat) then
    client.request(protocol.COMPACT_SESSION, { sessionId = chat.session_id },
      function(err)
        if err then
          failed(chat, err)
        end
      end)
  end
end

--- The fenced code blocks of `lines`: { first = line of the opening fence, last, text }.
function M.code_blocks(lines)
  local blocks, open = {}, nil
  for index, line in ipairs(lines) do
    local fence = line:match('^%s*(```+)') or line:match('^%s*(~~~+)')
    if fence then
      if not open then
        open = { first = index, fence = fence }
      elseif line:match('^%s*' .. vim.pesc(open.fence) .. '%s*$') then
        table.insert(blocks, { first = open.first, last = index,
          text = table.concat(vim.list_slice(lines, open.first + 1, index - 1), '\n') })
        open = nil
      end
    end
  end
  return blocks
end

--- `yc` / `:RelaviumYank`: yank the code block under the cursor (else the nearest one above,
--- else the last one) into the unnamed register (and `+` when there is a clipboard).
function M.yank_code_block(chat)
  if not chat or not chat.buffer:is_valid() then
    return nil
  end
  local lines = chat.buffer:lines()
  local blocks = M.code_blocks(lines)
  if #blocks == 0 then
    vim.notify('relavium: no code block in this chat', vim.log.levels.INFO)
    return nil
  end
  local row = 0
  local windows = vim.fn.win_findbuf(chat.buffer.bufnr)
  if vim.api.nvim_get_current_buf() == chat.buffer.bufnr then
    row = vim.api.nvim_win_get_cursor(0)[1]
  elseif #windows > 0 then
    row = vim.api.nvim_win_get_cursor(windows[1])[1]
  end
  local chosen = blocks[#blocks]
  for _, block in ipairs(blocks) do
    if block.first <= row then
      chosen = block
    end
  end
  vim.fn.setreg('"', chosen.text, 'l')
  vim.fn.setreg('0', chosen.text, 'l')
  if vim.fn.has('clipboard') == 1 then
    pcall(vim.fn.setreg, '+', chosen.text, 'l')
  end
  vim.notify(string.format('relavium: yanked %d lines', select(2, chosen.text:gsub('\n', '')) + 1))
  return chosen.text
end

return M
