--- Install or upgrade the relavium-lsp server for this plugin (`:RelaviumInstall`, `build.lua`).
---
--- The server comes from this plugin's own files, so its version is the plugin's: the wheel a
--- release archive carries in `server/`, else the repository a plugin manager cloned (it holds
--- `pyproject.toml`). It goes where the user's tools put it: `uv tool install` when `uv` is on
--- PATH, else `pipx install`, else a private virtualenv under `stdpath('data')/relavium`
--- made with a Python 3.11 or newer. What was installed is recorded in
--- `stdpath('data')/relavium/server.json`, which the plugin reads to find the server
--- (`relavium.server`); every command's output goes to `install.log` beside it.
---
--- `build.lua` loads this file with `dofile` before the plugin is on 'runtimepath', so it
--- requires no other module of the plugin.
local M = {}

local PACKAGE = 'relavium-lsp'
local MIN_PYTHON = { 3, 11 }
local PYTHON_CANDIDATES = { 'python3.13', 'python3.12', 'python3.11', 'python3', 'python' }
M.METHODS = { 'uv', 'pipx', 'venv' }

--- The plugin's root directory (this file is `<root>/lua/relavium/install.lua`).
function M.plugin_root()
  local source = debug.getinfo(1, 'S').source:sub(2)
  return vim.fn.fnamemodify(source, ':p:h:h:h')
end

--- Where the plugin keeps the private virtualenv, the install record and the log.
function M.data_dir()
  return vim.fn.stdpath('data') .. '/relavium'
end

local function record_path()
  return M.data_dir() .. '/server.json'
end

function M.log_path()
  return M.data_dir() .. '/install.log'
end

--- The last successful install: `{ command, method, version, source }`, or nil.
function M.read_record()
  local file = io.open(record_path(), 'r')
  if not file then
    return nil
  end
  local text = file:read('*a')
  file:close()
  local ok, record = pcall(vim.fn.json_decode, text)
  if ok and type(record) == 'table' and type(record.command) == 'string' then
    return record
  end
  return nil
end

local function write_record(record)
  local file = assert(io.open(record_path(), 'w'))
  file:write(vim.fn.json_encode(record))
  file:close()
end

--- What to install: the release archive's wheel, else the plugin's repository; nil when the
--- plugin directory has neither (a copy of `lua/` alone).
function M.source(root)
  local wheels = vim.fn.glob(root .. '/server/relavium_lsp-*.whl', true, true)
  if #wheels > 0 then
    table.sort(wheels)
    return wheels[#wheels]
  end
  if vim.fn.filereadable(root .. '/pyproject.toml') == 1 then
    return root
  end
  return nil
end

--- The first Python on PATH that is new enough for the server, or nil.
function M.find_python()
  local probe = 'import sys; print("%d.%d" % sys.version_info[:2])'
  for _, name in ipairs(PYTHON_CANDIDATES) do
    if vim.fn.executable(name) == 1 then
      local output = vim.fn.system({ name, '-c', probe })
      local major, minor = output:match('^(%d+)%.(%d+)')
      if vim.v.shell_error == 0 and major then
        major, minor = tonumber(major), tonumber(minor)
        if major > MIN_PYTHON[1] or (major == MIN_PYTHON[1] and minor >= MIN_PYTHON[2]) then
          return vim.fn.exepath(name)
        end
      end
    end
  end
  return nil
end

--- The method to use: the one asked for, else uv, else pipx, else a private virtualenv.
function M.choose_method(requested)
  if requested and requested ~= '' then
    if not vim.tbl_contains(M.METHODS, requested) then
      return nil, string.format('unknown install method %q (uv, pipx or venv)', requested)
    end
    if requested ~= 'venv' and vim.fn.executable(requested) ~= 1 then
      return nil, requested .. ' is not on PATH'
    end
    return requested
  end
  for _, method in ipairs({ 'uv', 'pipx' }) do
    if vim.fn.executable(method) == 1 then
      return method
    end
  end
  return 'venv'
end

-- A plan is the commands (`steps`, each an `argv`) run in order, and where the executable
-- lands: the plan's `bin_dir` when known beforehand, else the directory the step marked
-- `bin_dir = true` prints (the tool's own setting, which the user may have changed).
local plans = {}

function plans.uv(source)
  return {
    steps = {
      { argv = { 'uv', 'tool', 'install', '--force', '--reinstall-package', PACKAGE, source } },
      { argv = { 'uv', 'tool', 'dir', '--bin' }, bin_dir = true },
    },
  }
end

function plans.pipx(source)
  local argv = { 'pipx', 'install', '--force' }
  local python = M.find_python()
  if python then
    vim.list_extend(argv, { '--python', python })
  end
  table.insert(argv, source)
  return {
    steps = {
      { argv = argv },
      { argv = { 'pipx', 'environment', '--value', 'PIPX_BIN_DIR' }, bin_dir = true },
    },
  }
end

function plans.venv(source)
  local venv = M.data_dir() .. '/venv'
  local steps = {}
  if vim.fn.executable(venv .. '/bin/python') ~= 1 then
    local python = M.find_python()
    if not python then
      return nil,
        'no Python 3.11 or newer on PATH: install one (python.org, your package manager, '
          .. 'or uv, which brings its own) and run :RelaviumInstall again'
    end
    table.insert(steps, { argv = { python, '-m', 'venv', venv } })
  end
  local pip = { venv .. '/bin/python', '-m', 'pip', 'install', '--upgrade', source }
  table.insert(steps, { argv = pip })
  return { steps = steps, bin_dir = venv .. '/bin' }
end

local function append_log(text)
  local file = io.open(M.log_path(), 'a')
  if file then
    file:write(text)
    file:close()
  end
end

--- Run `argv`; `done(code, lines, stdout_lines)` gets its exit code and its output lines
--- (stdout and stderr in arrival order, and stdout's alone) on the main loop. A command
--- that cannot start ends with code -1.
local function run_job(argv, done)
  local printed, stdout = {}, {}
  local partial = { stdout = '', stderr = '' }
  local function add(stream, line)
    if line ~= '' then
      table.insert(printed, line)
      if stream == 'stdout' then
        table.insert(stdout, line)
      end
    end
  end
  -- A job's output arrives in chunks whose last item starts an unfinished line
  -- (`:help channel-lines`); a chunk of one empty item ends the stream.
  local function collector(stream)
    return function(_, chunk)
      chunk[1] = partial[stream] .. chunk[1]
      partial[stream] = table.remove(chunk)
      for _, line in ipairs(chunk) do
        add(stream, line)
      end
    end
  end
  local started = vim.fn.jobstart(argv, {
    cwd = M.data_dir(),
    env = { PIP_DISABLE_PIP_VERSION_CHECK = '1' },
    on_stdout = collector('stdout'),
    on_stderr = collector('stderr'),
    on_exit = function(_, code)
      vim.schedule(function()
        for stream, rest in pairs(partial) do
          add(stream, rest)
        end
        done(code, printed, stdout)
      end)
    end,
  })
  if started <= 0 then
    done(-1, { 'could not run ' .. argv[1] }, {})
  end
end

--- Start installing; returns a task table whose fields change as it runs: `done`, `ok`,
--- `status` (the step running now), `message` (the outcome) and, once installed, `record`.
--- Options: `root` (the plugin root), `method` (uv | pipx | venv; default: the first
--- available).
function M.start(options)
  local task = { done = false, ok = false, status = 'starting' }
  local function finish(ok, message)
    task.done, task.ok, task.message = true, ok, message
    append_log(string.format('== %s\n', message))
  end
  vim.fn.mkdir(M.data_dir(), 'p')
  local root = options.root or M.plugin_root()
  local source = M.source(root)
  if not source then
    finish(false, root .. ' has neither server/relavium_lsp-*.whl nor pyproject.toml')
    return task
  end
  local method, problem = M.choose_method(options.method)
  if not method then
    finish(false, problem)
    return task
  end
  local plan, plan_problem = plans[method](source)
  if not plan then
    finish(false, plan_problem)
    return task
  end
  append_log(string.format('\n== %s: install %s with %s from %s\n', os.date('!%Y-%m-%dT%H:%M:%SZ'),
    PACKAGE, method, source))

  local bin_dir = plan.bin_dir
  local function verify()
    local executable = bin_dir .. '/' .. PACKAGE
    local ran, output = pcall(vim.fn.system, { executable, '--version' })
    local version = ran and output:match('^relavium%-lsp (%S+)')
    if not version or vim.v.shell_error ~= 0 then
      return finish(false, string.format('%s --version failed after the install: %s',
        executable, output))
    end
    task.record = { command = executable, method = method, version = version, source = source }
    write_record(task.record)
    finish(true, string.format('installed %s %s with %s: %s', PACKAGE, version, method,
      executable))
  end

  local function run(index)
    local step = plan.steps[index]
    if not step then
      return verify()
    end
    task.status = table.concat(step.argv, ' ')
    append_log('$ ' .. task.status .. '\n')
    run_job(step.argv, function(code, printed, stdout)
      append_log(table.concat(printed, '\n') .. '\n')
      if code ~= 0 then
        local last = vim.list_slice(printed, math.max(1, #printed - 2))
        return finish(false, string.format('%s failed (exit %d): %s; the whole log: %s',
          step.argv[1], code, #last > 0 and table.concat(last, ' ') or 'no output',
          M.log_path()))
      end
      if step.bin_dir then
        local printed_dir = vim.trim(stdout[#stdout] or '')
        bin_dir = (vim.uv or vim.loop).fs_realpath(printed_dir) or printed_dir
      end
      run(index + 1)
    end)
  end
  run(1)
  return task
end

--- Install and wait for the end. `show(status)` hears of each step as it starts. With
--- `options.yield`, inside a coroutine (lazy.nvim runs `build.lua` in one), it yields the
--- running step instead of waiting, so the editor stays responsive; never set it where a C
--- function (a command) stands between the coroutine and this call.
function M.run(options, show)
  local task = M.start(options)
  local co, is_main = coroutine.running()
  local may_yield = options.yield and co ~= nil and not is_main
  local shown = nil
  while not task.done do
    if task.status ~= shown then
      shown = task.status
      if show then
        show(shown)
      end
    end
    if may_yield then
      coroutine.yield(shown)
    else
      vim.wait(200, function()
        return task.done or task.status ~= shown
      end)
    end
  end
  return task
end

--- `:RelaviumInstall [method]`: install, showing each step, and say how it ended. It waits
--- for the end, so a plugin manager's `build = ':RelaviumInstall'` has the server afterwards.
function M.command(method)
  local task = M.run({ method = method }, function(status)
    vim.api.nvim_echo({ { 'relavium: ' .. status } }, false, {})
    vim.cmd('redraw')
  end)
  local message = 'relavium: ' .. task.message
  if task.ok and require('relavium.client').get() then
    message = message .. ' (the running server is the old one until Neovim restarts)'
  end
  vim.notify(message, task.ok and vim.log.levels.INFO or vim.log.levels.ERROR)
end

return M
