--- The one language client of the plugin: start, attach, request, stop.
---
--- One server runs per Neovim for the workspace root chosen at setup (git root of the
--- working directory, else the working directory). Normal file buffers under that root are
--- attached, so the server sees open (unsaved) text; other buffers are never sent.
---
--- A server that fails after it was ready (a crash, a kill: not a clean exit) is started again at
--- once, at most RESTART_LIMIT times within RESTART_WINDOW_MS; chats are told either way.
local config = require('relavium.config')
local protocol = require('relavium.protocol')

local M = {}

local RESTART_LIMIT = 3
local RESTART_WINDOW_MS = 60000

local state = {
  client_id = nil,
  root = nil,
  ready = false,
  stopping = false, -- stop() was asked: the exit is no crash
  restarts = {}, -- uv.now() of recent restarts after a crash
  waiting = {}, -- { run, fail } pairs waiting for the server's `initialize` answer
  stopped = {}, -- callbacks to run once the server process has exited
}

local has_method_calls = vim.fn.has('nvim-0.11') == 1
local uv = vim.uv or vim.loop

--- Call a client method with the calling convention of the running Neovim (0.11 wants `:`).
local function invoke(client, name, ...)
  if has_method_calls then
    return client[name](client, ...)
  end
  return client[name](...)
end

local function git_root(directory)
  if vim.fn.executable('git') ~= 1 then
    return nil
  end
  local ok, output = pcall(vim.fn.systemlist,
    { 'git', '-C', directory, 'rev-parse', '--show-toplevel' })
  if ok and vim.v.shell_error == 0 and output[1] and output[1] ~= '' then
    return output[1]
  end
  return nil
end

--- The workspace root: the `root` option, else the git root of the cwd, else the cwd.
function M.detect_root()
  if config.options.root then
    return vim.fn.fnamemodify(config.options.root, ':p'):gsub('/$', '')
  end
  local cwd = vim.fn.getcwd()
  return git_root(cwd) or cwd
end

--- Client capabilities: Neovim's own plus what this plugin implements.
function M.capabilities()
  local capabilities = vim.lsp.protocol.make_client_capabilities()
  return vim.tbl_deep_extend('force', capabilities, {
    workspace = {
      applyEdit = true,
      -- Neovim applies documentChanges (create + versioned edits) but 0.7 does not say so.
      workspaceEdit = { documentChanges = true },
    },
    experimental = {
      relavium = {
        approvals = true,
        openUntitled = true,
        editorState = true,
        editorTools = require('relavium.editor_tools').FEATURES,
      },
    },
  })
end

local function handlers()
  -- Each handler looks its module up when called, so a reloaded module takes effect.
  return {
    [protocol.SESSION_EVENT] = function(_, params)
      require('relavium.chat').on_session_event(params)
    end,
    [protocol.SESSIONS_CHANGED] = function(_, params)
      require('relavium.session_list').on_sessions_changed(params)
    end,
    [protocol.WORKSPACE_MEMORY_CHANGED] = function(_, params)
      require('relavium.memory').on_changed(params)
    end,
    [protocol.REQUEST_APPROVAL] = function(_, params)
      return require('relavium.ui').request_approval(params)
    end,
    [protocol.OPEN_UNTITLED] = function(_, params)
      return require('relavium.ui').open_untitled(params)
    end,
    [protocol.EDITOR_QUERY] = function(_, params)
      return require('relavium.editor_tools').answer(params)
    end,
    ['workspace/applyEdit'] = function(err, params, ctx, handler_config)
      local edits = require('relavium.edits')
      local stale = edits.stale_reason(params)
      if stale then
        return { applied = false, failureReason = stale }
      end
      edits.prepare(params, M.root())
      return vim.lsp.handlers['workspace/applyEdit'](err, params, ctx, handler_config)
    end,
  }
end

local function flush_waiting(client)
  local waiting = state.waiting
  state.waiting = {}
  for _, entry in ipairs(waiting) do
    entry.run(client)
  end
end

-- The server exited before answering `initialize`: tell everyone who was waiting.
local function fail_waiting(waiting)
  for _, entry in ipairs(waiting) do
    if entry.fail then
      entry.fail()
    end
  end
end

--- The running client, or nil.
function M.get()
  if not state.client_id then
    return nil
  end
  local client = vim.lsp.get_client_by_id(state.client_id)
  if client == nil or invoke(client, 'is_stopped') then
    return nil
  end
  return client
end

--- The workspace root of the running (or last) client.
function M.root()
  return state.root or M.detect_root()
end

--- Start the server unless it runs already; returns the client id or nil and a message.
function M.start()
  if M.get() then
    return state.client_id
  end
  local root = M.detect_root()
  local cmd, problem = require('relavium.server').command(root)
  if not cmd then
    return nil, problem
  end
  state.root = root
  state.ready = false
  local client_config = {
    name = 'relavium',
    cmd = cmd,
    cmd_env = config.options.cmd_env,
    root_dir = root,
    capabilities = M.capabilities(),
    handlers = handlers(),
    init_options = config.initialization_options(),
    flags = { exit_timeout = 3000 },
    on_init = function(client)
      state.ready = true
      flush_waiting(client)
    end,
    on_exit = function(code, signal, client_id)
      -- May run in a libuv callback: only plain Lua here, the rest on the main loop.
      local crashed = code ~= 0 or signal ~= 0 -- a clean stop (any client's) exits with 0
      local waiting = {}
      local was_ready = false
      if state.client_id == client_id then
        was_ready = state.ready
        state.client_id = nil
        state.ready = false
        waiting = state.waiting
        state.waiting = {}
      end
      local stopped = state.stopped
      state.stopped = {}
      local asked_to_stop = state.stopping
      state.stopping = false
      vim.schedule(function()
        fail_waiting(waiting)
        local restarted = crashed and was_ready and not asked_to_stop and M.restart_after_crash()
        require('relavium.chat').on_server_exit(restarted)
        for _, callback in ipairs(stopped) do
          callback()
        end
      end)
    end,
  }
  local client_id
  if has_method_calls then
    client_id = vim.lsp.start(client_config, { attach = false, reuse_client = function()
      return false
    end })
  else
    client_id = vim.lsp.start_client(client_config)
  end
  if not client_id then
    return nil, 'could not start ' .. table.concat(cmd, ' ')
  end
  state.client_id = client_id
  M.attach_all()
  return client_id
end

--- Start the server again after it exited on its own; false when Neovim is quitting, or
--- it crashed too often lately (it would only crash again).
function M.restart_after_crash()
  if vim.v.exiting ~= vim.NIL or M.get() then
    return false
  end
  local now = uv.now()
  local recent = {}
  for _, at in ipairs(state.restarts) do
    if now - at < RESTART_WINDOW_MS then
      table.insert(recent, at)
    end
  end
  if #recent >= RESTART_LIMIT then
    state.restarts = recent
    return false
  end
  table.insert(recent, now)
  state.restarts = recent
  local client_id = M.start()
  return client_id ~= nil
end

--- Whether a buffer is a normal file buffer under the workspace root.
function M.should_attach(bufnr)
  if not vim.api.nvim_buf_is_valid(bufnr) or vim.bo[bufnr].buftype ~= '' then
    return false
  end
  local name = vim.api.nvim_buf_get_name(bufnr)
  if name == '' or name:match('^%a[%w+.-]*://') then
    return false
  end
  -- Compare real paths: git reports the root with symlinks resolved, buffer names may not.
  local root = uv.fs_realpath(M.root()) or M.root()
  local full = vim.fn.fnamemodify(name, ':p')
  local path = uv.fs_realpath(full) or full
  return path == root or path:sub(1, #root + 1) == root .. '/'
end

--- Attach the client to a buffer when it qualifies (idempotent).
function M.attach(bufnr)
  local client = M.get()
  if client and M.should_attach(bufnr) and not vim.lsp.buf_is_attached(bufnr, client.id) then
    vim.lsp.buf_attach_client(bufnr, client.id)
  end
end

--- Attach every loaded buffer that qualifies.
function M.attach_all()
  for _, bufnr in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(bufnr) then
      M.attach(bufnr)
    end
  end
end

--- Run `callback(client)` once the server is initialized, starting it if needed;
--- `on_failure()` runs instead when the server exits before that.
function M.with_client(callback, on_failure)
  local client = M.get()
  if not client then
    local _, message = M.start()
    if message then
      vim.notify('relavium: ' .. message, vim.log.levels.ERROR)
      return false
    end
    client = M.get()
  end
  if state.ready then
    callback(client)
  else
    table.insert(state.waiting, { run = callback, fail = on_failure })
  end
  return true
end

--- A client-side request failure, shaped like a JSON-RPC error.
function M.unavailable(message)
  return { message = message, data = { code = 'server_unavailable' } }
end

--- Send a request; `on_result(err, result)` runs on the main loop when the server answers.
function M.request(method, params, on_result)
  return M.with_client(function(client)
    local ok = invoke(client, 'request', method, params, function(err, result)
      on_result(err, result)
    end)
    if not ok then
      on_result(M.unavailable('the relavium server is not running'), nil)
    end
  end, function()
    on_result(M.unavailable('the relavium server exited before it was ready'), nil)
  end)
end

--- Send a notification, after `initialize` when the server is still starting; dropped
--- when no server runs (a notification is never a reason to start one).
function M.notify(method, params)
  if not M.get() then
    return
  end
  M.with_client(function(client)
    invoke(client, 'notify', method, params)
  end)
end

--- Stop the server; `on_stopped()` runs once its process has exited.
function M.stop(on_stopped)
  local client = M.get()
  if not client then
    if on_stopped then
      on_stopped()
    end
    return
  end
  if on_stopped then
    table.insert(state.stopped, on_stopped)
  end
  state.stopping = true
  invoke(client, 'stop')
end

--- Whether the server has answered `initialize`.
function M.is_ready()
  return M.get() ~= nil and state.ready
end

return M
