--- Small, pure text helpers for the chat buffer: one-line labels, money, counts, tool input.
local M = {}

local MAX_BODY_LINES = 200
local LEADING_KEYS = { 'path', 'command', 'url', 'query', 'pattern' }

--- `text` on one line (buffer lines cannot hold newlines), cut to `max` characters.
function M.one_line(text, max)
  if text == nil or text == vim.NIL then
    text = ''
  end
  text = tostring(text):gsub('[\r\n]+', ' ')
  max = max or 200
  if vim.fn.strchars(text) > max then
    return vim.fn.strcharpart(text, 0, max - 1) .. '…'
  end
  return text
end

--- Text split into buffer lines (CRLF and CR become line breaks).
function M.lines(text)
  return vim.split((tostring(text or ''):gsub('\r\n?', '\n')), '\n', { plain = true })
end

--- Microcents (1e-6 cent) as dollars, with enough digits to show small per-turn costs.
function M.cost(microcents, priced)
  local dollars = (microcents or 0) / 100000000
  local digits = 2
  if dollars ~= 0 and dollars < 0.0001 then
    digits = 6
  elseif dollars ~= 0 and dollars < 0.01 then
    digits = 4
  end
  local text = string.format('$%.' .. digits .. 'f', dollars)
  if priced == false then
    return text .. ' (unpriced model)'
  end
  return text
end

--- A token count as people read it: 950, 12.3k, 4.1M.
function M.tokens(count)
  count = count or 0
  if count < 1000 then
    return tostring(count)
  elseif count < 1000000 then
    return string.format(count < 10000 and '%.1fk' or '%.0fk', count / 1000)
  end
  return string.format('%.1fM', count / 1000000)
end

--- A duration in milliseconds as a short label.
function M.duration(ms)
  ms = ms or 0
  if ms < 1000 then
    return string.format('%d ms', ms)
  end
  return string.format(ms < 10000 and '%.1f s' or '%.0f s', ms / 1000)
end

local function scalar(value)
  if type(value) == 'string' then
    return value
  elseif value == nil or value == vim.NIL then
    return 'null'
  elseif type(value) == 'table' then
    local ok, encoded = pcall(vim.json.encode, value)
    return ok and encoded or vim.inspect(value)
  end
  return tostring(value)
end

-- The server reduces bulky inputs (file contents) to `{length, head}`; show their size.
local function bulky_size(value)
  if type(value) == 'string' and #value > 40 then
    return vim.fn.strchars(value)
  elseif type(value) == 'table' and type(value.length) == 'number' then
    return value.length
  end
  return nil
end

local function sorted_keys(input)
  local keys = vim.tbl_keys(input)
  table.sort(keys)
  return keys
end

--- One line describing a tool call's input: paths and commands first, bulk as sizes.
function M.tool_input_summary(input)
  if type(input) ~= 'table' then
    return ''
  end
  local pieces = {}
  local leading = {}
  for _, key in ipairs(LEADING_KEYS) do
    leading[key] = true
    if input[key] ~= nil then
      table.insert(pieces, scalar(input[key]))
    end
  end
  if type(input.args) == 'table' and input.args[1] ~= nil then
    local args = {}
    for _, item in ipairs(input.args) do
      table.insert(args, scalar(item))
    end
    table.insert(pieces, table.concat(args, ' '))
  end
  for _, key in ipairs(sorted_keys(input)) do
    if not leading[key] and key ~= 'args' then
      local size = bulky_size(input[key])
      if size then
        table.insert(pieces, string.format('%s: %d chars', key, size))
      else
        table.insert(pieces, key .. ': ' .. scalar(input[key]))
      end
    end
  end
  return M.one_line(table.concat(pieces, '  '), 160)
end

--- Indented body lines for a fold: `prefix` on each, at most MAX_BODY_LINES of them.
function M.body(text, prefix)
  prefix = prefix or '    '
  local out = {}
  local lines = M.lines(text)
  for index, line in ipairs(lines) do
    if index > MAX_BODY_LINES then
      table.insert(out, string.format('%s… (%d more lines)', prefix, #lines - MAX_BODY_LINES))
      break
    end
    table.insert(out, prefix .. line)
  end
  return out
end

--- A tool call's input as `key: value` lines (multi-line strings keep their lines).
function M.tool_input_lines(input)
  local out = {}
  if type(input) ~= 'table' then
    return out
  end
  for _, key in ipairs(sorted_keys(input)) do
    local value = input[key]
    local text = scalar(value)
    if type(value) == 'table' and type(value.length) == 'number' and type(value.head) == 'string'
    then
      -- the server's sanitized form of bulky text: its size, then its beginning
      text = string.format('%d chars\n%s', value.length, value.head)
    end
    local lines = M.lines(text)
    table.insert(out, '    ' .. key .. ': ' .. lines[1])
    if #lines > 1 then
      for _, line in ipairs(M.body(table.concat(lines, '\n', 2), '      ')) do
        table.insert(out, line)
      end
    end
  end
  return out
end

--- Who a tool wants to touch, from an approval preview.
function M.preview_target(preview)
  if type(preview) ~= 'table' then
    return ''
  end
  return preview.path or preview.command or preview.host or ''
end

return M
