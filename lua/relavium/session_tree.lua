--- Delegated child sessions (`parentSessionId`) listed right under the session that started
--- them, in the order the server listed them; a child whose parent is not listed stays at the
--- top. Used by the session picker and `:RelaviumSessionList`.
local M = {}

--- `sessions` (listSessions entries) → a list of `{ session = …, depth = n }` (0: top level).
function M.nest(sessions)
  local listed, children, roots = {}, {}, {}
  for _, session in ipairs(sessions) do
    listed[session.id] = true
  end
  for _, session in ipairs(sessions) do
    local parent = session.parentSessionId
    if type(parent) == 'string' and parent ~= session.id and listed[parent] then
      children[parent] = children[parent] or {}
      table.insert(children[parent], session)
    else
      table.insert(roots, session)
    end
  end
  local ordered, seen = {}, {}
  local function visit(session, depth)
    if seen[session.id] then
      return
    end
    seen[session.id] = true
    table.insert(ordered, { session = session, depth = depth })
    for _, child in ipairs(children[session.id] or {}) do
      visit(child, depth + 1)
    end
  end
  for _, session in ipairs(roots) do
    visit(session, 0)
  end
  -- A cycle (a damaged history) leaves sessions no root reaches: list them at the top.
  for _, session in ipairs(sessions) do
    visit(session, 0)
  end
  return ordered
end

--- The indentation that shows a nested session (`↳` under its parent).
function M.prefix(depth)
  if depth <= 0 then
    return ''
  end
  return string.rep('  ', math.min(depth, 4) - 1) .. '  ↳ '
end

return M
