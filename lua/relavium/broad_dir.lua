--- A session at `/` or the home directory. The server refuses one (`data.code`
--- `broad_working_dir`): its sandbox would hold every file there. The user is asked once per
--- directory in this Neovim (|vim.ui.select()|), or allows it for good with
--- `setup({ allow_broad_working_dir = true })`; then the session starts again with
--- `allowBroadWorkingDir`.
local client = require('relavium.client')
local config = require('relavium.config')
local protocol = require('relavium.protocol')

local M = {}

local BROAD = protocol.WORKING_DIR_ERROR_CODE.BROAD_WORKING_DIR
local ALLOW = 'Allow it for this Neovim'
local CANCEL = 'Cancel (open Neovim in a project folder instead)'
local allowed = {} -- working directories the user allowed in this Neovim

--- The error's data when it is the refusal of a broad working directory, else nil.
function M.refusal(err)
  local data = type(err) == 'table' and type(err.data) == 'table' and err.data or {}
  if data.code == BROAD and type(data.workingDir) == 'string' then
    return data
  end
  return nil
end

local function declined(refused)
  return {
    message = ('no session started: %s is %s. Open Neovim in a project folder, or allow it '
      .. '(setup option allow_broad_working_dir)'):format(refused.workingDir, tostring(refused.reason)),
    data = { code = BROAD, workingDir = refused.workingDir },
  }
end

--- `relavium/startSession` with `params`; `on_result(err, result)` as client.request's. A
--- refusal of a broad directory is asked about (unless allowed already) and retried once.
--- Returns what client.request returns (false when the server could not be started).
function M.start_session(params, on_result)
  return client.request(protocol.START_SESSION, params, function(err, result)
    local refused = M.refusal(err)
    if not refused then
      on_result(err, result)
      return
    end
    local function retry()
      local again = vim.tbl_extend('force', params, { allowBroadWorkingDir = true })
      client.request(protocol.START_SESSION, again, on_result)
    end
    if config.options.allow_broad_working_dir or allowed[refused.workingDir] then
      retry()
      return
    end
    vim.ui.select({ ALLOW, CANCEL }, {
      prompt = ('Start a Relavium session in %s (%s)? The agent could read and change every '
        .. 'file under it.'):format(refused.workingDir, tostring(refused.reason)),
      kind = 'relavium_broad_working_dir',
    }, function(choice)
      if choice == ALLOW then
        allowed[refused.workingDir] = true
        retry()
      else
        on_result(declined(refused), nil)
      end
    end)
  end)
end

return M
