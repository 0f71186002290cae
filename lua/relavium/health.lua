--- `:checkhealth relavium`: Neovim, the server (found, its version against the plugin's),
--- the server's own `relavium-lsp doctor --json` checks (keychain, database, configuration,
--- providers) and git.
local M = {}

-- 0.10+ names these start/ok/…; 0.7–0.9 report_start/report_ok/… (`health` in 0.7).
local health = vim.health or require('health')
local functions = {
  start = health.start or health.report_start,
  ok = health.ok or health.report_ok,
  info = health.info or health.report_info,
  warn = health.warn or health.report_warn,
  error = health.error or health.report_error,
}

--- Report one line; advice only when there is some (0.7 hands every argument on to
--- Vimscript, where a nil is not "no advice").
local function say(level, message, advice)
  if advice then
    functions[level](message, advice)
  else
    functions[level](message)
  end
end

local DOCTOR_LEVELS = { ok = 'ok', info = 'info', problem = 'error' }
local SOURCES = {
  option = 'the `cmd` option',
  installed = 'installed by :RelaviumInstall',
  path = 'on PATH',
  workspace = "the workspace's trusted .venv",
}

local function run(argv)
  local ok, output = pcall(vim.fn.system, argv)
  return ok and vim.v.shell_error == 0, ok and output or tostring(output)
end

local function check_neovim()
  say('start', 'Neovim')
  local version = vim.version()
  local shown = string.format('%d.%d.%d', version.major, version.minor, version.patch)
  if vim.fn.has('nvim-0.9') == 1 then
    say('ok', shown)
  else
    say('ok', shown .. " (a workspace .venv server runs only with workspace_venv = true)")
  end
end

--- The server command, reported; nil when there is none.
local function check_server(root)
  say('start', 'relavium-lsp')
  local command, source = require('relavium.server').command(root)
  if not command then
    say('error', source, { 'run :RelaviumInstall (the build step of your plugin manager)' })
    return nil
  end
  say('ok', string.format('%s (%s)', table.concat(command, ' '), SOURCES[source]))
  local version_argv = require('relavium.server').with_arguments(command, { '--version' })
  if not version_argv then
    say('info', 'a custom `cmd` without `serve`: its version is not checked')
    return nil
  end
  local ran, output = run(version_argv)
  local version = ran and output:match('relavium%-lsp (%S+)')
  if not version then
    say('error', '`' .. table.concat(version_argv, ' ') .. '` failed: ' .. vim.trim(output))
    return nil
  end
  local wanted = require('relavium.protocol').PACKAGE_VERSION
  if version == wanted then
    say('ok', string.format('version %s, the plugin\'s', version))
  else
    say('error', string.format('version %s, but the plugin is %s', version, tostring(wanted)),
      { 'run :RelaviumInstall to install the matching server' })
  end
  return command
end

local function check_doctor(command)
  say('start', 'relavium-lsp doctor')
  local argv = require('relavium.server').with_arguments(command,
    { 'doctor', '--json', '--offline' })
  -- doctor exits 1 when a check failed: its JSON says which.
  local _, output = run(argv)
  local decoded, result = pcall(vim.fn.json_decode, output)
  if not decoded or type(result) ~= 'table' or type(result.checks) ~= 'table' then
    say('error', '`' .. table.concat(argv, ' ') .. '` failed: ' .. vim.trim(output))
    return
  end
  for _, check in ipairs(result.checks) do
    local level = DOCTOR_LEVELS[check.status] or 'info'
    local advice = check.hint ~= vim.NIL and check.hint or nil
    say(level, string.format('%s: %s', check.check, check.summary), advice)
  end
  say('info', 'providers were not asked for their models: run `relavium-lsp doctor` for that')
end

local function check_git()
  say('start', 'git')
  if vim.fn.executable('git') ~= 1 then
    say('warn', 'git is not on PATH', {
      'sessions record the branch, and the agent checkpoints files run_command changes, '
        .. 'only in a git repository',
    })
    return
  end
  local _, output = run({ 'git', '--version' })
  say('ok', vim.trim(output))
end

function M.check()
  check_neovim()
  local command = check_server(require('relavium.client').root())
  if command then
    check_doctor(command)
  end
  check_git()
end

return M
