--- Answers `relavium/editorQuery`: the agent's editor_* tools, from Neovim's own knowledge.
---
--- Diagnostics come from `vim.diagnostic.get` (every namespace: other language servers,
--- linters, anything that sets diagnostics); symbols, references and definitions from the
--- other language servers attached to the file, through `vim.lsp.buf_request_sync` (the
--- relavium server itself is skipped). Positions are 1-based both ways; answers are capped
--- at the server's `maxItems` and every request waits at most `timeout_ms`.
local protocol = require('relavium.protocol')

local FEATURE = protocol.EDITOR_FEATURE
local SEVERITY = protocol.DIAGNOSTIC_SEVERITY

local M = {}

M.timeout_ms = 5000
--- What this client answers (advertised as `experimental.relavium.editorTools`).
M.FEATURES = { FEATURE.DIAGNOSTICS, FEATURE.SYMBOLS, FEATURE.REFERENCES, FEATURE.DEFINITION }

local SEVERITY_NAMES = {
  [vim.diagnostic.severity.ERROR] = SEVERITY.ERROR,
  [vim.diagnostic.severity.WARN] = SEVERITY.WARNING,
  [vim.diagnostic.severity.INFO] = SEVERITY.INFORMATION,
  [vim.diagnostic.severity.HINT] = SEVERITY.HINT,
}

local function buffer_for(path, load)
  local bufnr = vim.fn.bufnr(path)
  if bufnr == -1 then
    if not load then
      return nil
    end
    bufnr = vim.fn.bufadd(path)
  end
  if load and not vim.api.nvim_buf_is_loaded(bufnr) then
    vim.fn.bufload(bufnr)
  end
  return bufnr
end

local function diagnostics(params, limit)
  local bufnr = nil
  if params.path then
    bufnr = buffer_for(params.path, false)
    if bufnr == nil then
      return { diagnostics = {} } -- not open: no language server has looked at it
    end
  end
  local out = {}
  for _, item in ipairs(vim.diagnostic.get(bufnr)) do
    if #out >= limit then
      break
    end
    local name = vim.api.nvim_buf_get_name(item.bufnr)
    if name ~= '' then
      table.insert(out, {
        path = name,
        line = item.lnum + 1,
        character = (item.col or 0) + 1,
        severity = SEVERITY_NAMES[item.severity] or SEVERITY.ERROR,
        message = tostring(item.message or ''),
        source = item.source and tostring(item.source) or nil,
        code = item.code and tostring(item.code) or nil,
      })
    end
  end
  return { diagnostics = out }
end

local function is_other_server(client_id)
  local client = vim.lsp.get_client_by_id(client_id)
  return client ~= nil and client.name ~= 'relavium'
end

-- Each server's answer to one LSP request (errors and the relavium server left out).
local function ask(bufnr, method, request)
  local answers = vim.lsp.buf_request_sync(bufnr, method, request, M.timeout_ms) or {}
  local results = {}
  for client_id, answer in pairs(answers) do
    if is_other_server(client_id) and answer.result and not answer.err then
      table.insert(results, answer.result)
    end
  end
  return results
end

local function location_of(item)
  local uri = item.uri or item.targetUri
  local range = item.range or item.targetSelectionRange or item.targetRange
  if not uri or not range then
    return nil
  end
  return {
    path = vim.uri_to_fname(uri),
    line = range.start.line + 1,
    character = range.start.character + 1,
  }
end

local function as_list(result)
  if result == nil or result == vim.NIL then
    return {}
  end
  if result.uri or result.targetUri then
    return { result }
  end
  return result
end

local function locations(params, method, limit)
  local bufnr = buffer_for(params.path, true)
  local request = {
    textDocument = { uri = vim.uri_from_fname(params.path) },
    position = { line = (params.line or 1) - 1, character = (params.character or 1) - 1 },
  }
  if method == 'textDocument/references' then
    request.context = { includeDeclaration = true }
  end
  local out = {}
  for _, result in ipairs(ask(bufnr, method, request)) do
    for _, item in ipairs(as_list(result)) do
      local location = location_of(item)
      if location and #out < limit then
        table.insert(out, location)
      end
    end
  end
  return { locations = out }
end

local function symbol_kind(kind)
  return vim.lsp.protocol.SymbolKind[kind] or tostring(kind)
end

local function add_document_symbols(out, path, symbols, container, limit)
  for _, symbol in ipairs(symbols or {}) do
    if #out >= limit then
      return
    end
    local location = symbol.location and location_of(symbol.location)
    local range = symbol.selectionRange or symbol.range
    table.insert(out, {
      name = tostring(symbol.name),
      kind = symbol_kind(symbol.kind),
      path = location and location.path or path,
      line = location and location.line or (range and range.start.line + 1) or 1,
      character = location and location.character or (range and range.start.character + 1) or 1,
      container = container or symbol.containerName,
    })
    add_document_symbols(out, path, symbol.children, symbol.name, limit)
  end
end

local function symbols(params, limit)
  local out = {}
  if params.path then
    local bufnr = buffer_for(params.path, true)
    local request = { textDocument = { uri = vim.uri_from_fname(params.path) } }
    for _, result in ipairs(ask(bufnr, 'textDocument/documentSymbol', request)) do
      add_document_symbols(out, params.path, result, nil, limit)
    end
  else
    local bufnr = vim.api.nvim_get_current_buf()
    for _, result in ipairs(ask(bufnr, 'workspace/symbol', { query = params.query or '' })) do
      add_document_symbols(out, nil, result, nil, limit)
    end
  end
  return { symbols = out }
end

--- The handler of `relavium/editorQuery`.
function M.answer(params)
  if type(params) ~= 'table' then
    return {}
  end
  local limit = tonumber(params.maxItems) or 200
  local kind = params.kind
  local ok, result = pcall(function()
    if kind == FEATURE.DIAGNOSTICS then
      return diagnostics(params, limit)
    elseif kind == FEATURE.SYMBOLS then
      return symbols(params, limit)
    elseif kind == FEATURE.REFERENCES then
      return locations(params, 'textDocument/references', limit)
    elseif kind == FEATURE.DEFINITION then
      return locations(params, 'textDocument/definition', limit)
    end
    return {}
  end)
  if not ok then
    return nil, { code = -32603, message = 'editor query failed: ' .. tostring(result) }
  end
  return result
end

return M
