--- `:RelaviumSetup`: set up a real model from Neovim. Pick a provider (hosted, or a server
--- on this machine) with vim.ui.select, a model, the server's address for a local one, and
--- the API key at a hidden prompt (vim.fn.inputsecret); the server stores the key in the OS
--- keychain, writes `default_model` into ~/.relavium/config.toml (comments kept) and checks
--- the provider (`relavium/setupModel`). The key is never echoed, logged or kept here.
local client = require('relavium.client')
local protocol = require('relavium.protocol')

local M = {}

local OTHER_MODEL = 'Another model…'

local function describe_preset(preset)
  local key = preset.needsKey and 'needs an API key' or 'no key needed'
  return string.format('%s (%s) — %s%s', preset.label, preset.id, key,
    preset.baseUrl and (' · ' .. preset.baseUrl) or '')
end

--- Tell the user what the server did (and what to fix when the check failed).
local function report(result)
  local stored = ({ keychain = ' The key is in the OS keychain.',
    file = ' The key is in your keyring file.' })[result.keyStored] or ''
  local mark = result.check.ok and '✓' or '✗'
  vim.notify(string.format('relavium: new chats use %s (%s).%s %s %s', result.defaultModel,
    result.configPath, stored, mark, result.check.message),
    result.check.ok and vim.log.levels.INFO or vim.log.levels.WARN)
end

local function send(params, done)
  client.request(protocol.SETUP_MODEL, params, function(err, result)
    if err or type(result) ~= 'table' then
      vim.notify('relavium: the setup failed: ' .. ((err and err.message) or 'no answer'),
        vim.log.levels.ERROR)
    else
      report(result)
    end
    if done then
      done(err, result)
    end
  end)
end

--- The key at a hidden prompt (empty: none, or keep the stored one).
local function ask_key(preset)
  local prompt = preset.needsKey
      and string.format('API key for %s (hidden; empty keeps a stored one): ', preset.label)
      or string.format('API key for %s, only if your server wants one (hidden): ', preset.label)
  local ok, key = pcall(vim.fn.inputsecret, prompt)
  if not ok then
    return nil, false -- interrupted
  end
  key = vim.trim(key or '')
  return key ~= '' and key or nil, true
end

local function finish(preset, model, base_url, done)
  local key, answered = ask_key(preset)
  if not answered then
    return
  end
  local params = { preset = preset.id, model = model }
  if base_url and base_url ~= preset.baseUrl then
    params.baseUrl = base_url
  end
  if key then
    params.apiKey = key
  end
  send(params, done)
end

local function ask_base_url(preset, model, done)
  if not preset['local'] then
    finish(preset, model, nil, done)
    return
  end
  vim.ui.input({ prompt = 'Where ' .. preset.label .. ' listens: ', default = preset.baseUrl },
    function(url)
      if url and vim.trim(url) ~= '' then
        finish(preset, model, vim.trim(url), done)
      end
    end)
end

local function ask_model(preset, done)
  local function typed()
    vim.ui.input({ prompt = 'Model of ' .. preset.label .. ': ' }, function(model)
      if model and vim.trim(model) ~= '' then
        ask_base_url(preset, vim.trim(model), done)
      end
    end)
  end
  local suggested = preset.suggestedModels or {}
  if #suggested == 0 then
    typed()
    return
  end
  local choices = vim.list_extend(vim.deepcopy(suggested), { OTHER_MODEL })
  vim.ui.select(choices, { prompt = 'Model of ' .. preset.label, kind = 'relavium_setup_model' },
    function(choice)
      if choice == OTHER_MODEL then
        typed()
      elseif choice then
        ask_base_url(preset, choice, done)
      end
    end)
end

--- Run the setup; `done(err, result)` (optional) runs once the server answered.
function M.run(done)
  client.request(protocol.LIST_PROVIDER_PRESETS, vim.empty_dict(), function(err, result)
    if err or type(result) ~= 'table' then
      vim.notify('relavium: setting up a model needs the server: '
        .. ((err and err.message) or 'no answer'), vim.log.levels.ERROR)
      return
    end
    vim.ui.select(result.presets or {}, {
      prompt = 'Which provider serves the model?',
      kind = 'relavium_setup_provider',
      format_item = describe_preset,
    }, function(preset)
      if preset then
        ask_model(preset, done)
      end
    end)
  end)
end

return M
