--- Peer messages in a transcript (docs/design.md §2.5): another session's agent wrote them.
---
--- The server stores a delivered peer message as a user message attributed to the sending
--- agent (`agentSlug`) whose text starts with a fixed header (engine/peers.py `_as_received`):
--- `Message from the <agent> agent (session <id>)[, awaiting your reply]:` and a blank line.
--- Both must agree before the chat shows it as from that session rather than as the user's.
local M = {}

local PREFIX = 'Message from the '
local WAITING = ', awaiting your reply'

--- The sender of a peer message ({agent, session_id, awaits_reply}) and the text without the
--- header; nil for any other message.
function M.origin(text, agent_slug)
  if type(text) ~= 'string' or type(agent_slug) ~= 'string' then
    return nil
  end
  if text:sub(1, #PREFIX) ~= PREFIX then
    return nil
  end
  local pattern = '^(%S+) agent %(session ([^%)%s]+)%)(.*)$'
  local agent, session_id, rest = text:sub(#PREFIX + 1):match(pattern)
  if agent == nil or agent ~= agent_slug then
    return nil
  end
  local awaits = false
  if rest:sub(1, #WAITING) == WAITING then
    awaits, rest = true, rest:sub(#WAITING + 1)
  end
  if rest:sub(1, 3) ~= ':\n\n' then
    return nil
  end
  return { agent = agent, session_id = session_id, awaits_reply = awaits }, rest:sub(4)
end

--- The heading of a peer message: `## from <agent> · session <short id>`.
function M.heading(origin)
  local waiting = origin.awaits_reply and ' · awaits a reply' or ''
  local short = origin.session_id:sub(1, 8)
  return string.format('## from %s · session %s%s', origin.agent, short, waiting)
end

return M
