--- Orders one session's event stream, detects gaps and fills them from the durable log.
---
--- The server stamps every event with a per-session `sequenceNumber` and keeps them all, so a
--- missed notification is never lost: when an event skips ahead, the sequencer buffers it and
--- asks `fetch(after, done)` for the backlog (`relavium/sessionEvents {afterSequence}`), then
--- applies the backlog and the buffered events in order. Anything at or below the last applied
--- sequence is dropped, so a backlog that overlaps live notifications never duplicates.
local M = {}

local MAX_BUFFERED = 5000
M.PAGE_SIZE = 1000

local Sequencer = {}
Sequencer.__index = Sequencer

--- `apply(event)` renders one event; `fetch(after_sequence, limit, done)` must call
--- `done(events)` with the backlog page, or `done(nil)` when the fetch failed.
function M.new(apply, fetch)
  return setmetatable({
    last = nil, -- last applied sequence; nil until start()
    early = {}, -- sequence -> event that arrived ahead of the stream
    early_count = 0,
    in_flight = false,
    apply = apply,
    fetch = fetch,
  }, Sequencer)
end

--- The sequence of the last applied event (nil before start).
function Sequencer:last_sequence()
  return self.last
end

--- Whether a backlog fetch is under way.
function Sequencer:fetching()
  return self.in_flight
end

local function smallest_key(tbl)
  local smallest
  for key in pairs(tbl) do
    if smallest == nil or key < smallest then
      smallest = key
    end
  end
  return smallest
end

function Sequencer:_forget_applied()
  for sequence in pairs(self.early) do
    if sequence <= self.last then
      self.early[sequence] = nil
      self.early_count = self.early_count - 1
    end
  end
end

function Sequencer:_request_backlog()
  if self.in_flight then
    return
  end
  self.in_flight = true
  local after = self.last
  self.fetch(after, M.PAGE_SIZE, function(events)
    self:_accept_backlog(events)
  end)
end

-- Apply buffered events that continue the stream; ask for the backlog at a hole.
function Sequencer:_drain()
  local next_event = self.early[self.last + 1]
  while next_event ~= nil do
    self.early[self.last + 1] = nil
    self.early_count = self.early_count - 1
    self.last = self.last + 1
    self.apply(next_event)
    next_event = self.early[self.last + 1]
  end
  if self.early_count > 0 then
    self:_request_backlog()
  end
end

-- The log had nothing for a hole (or could not be read): move past it rather than stall.
function Sequencer:_skip_hole()
  local smallest = smallest_key(self.early)
  if smallest == nil then
    return
  end
  self.last = smallest - 1
  self:_forget_applied()
  self:_drain()
end

function Sequencer:_accept_backlog(events)
  self.in_flight = false
  if events == nil then
    self:_skip_hole()
    return
  end
  table.sort(events, function(a, b)
    return a.sequenceNumber < b.sequenceNumber
  end)
  local progressed = false
  for _, event in ipairs(events) do
    if event.sequenceNumber > self.last then
      self.last = event.sequenceNumber
      progressed = true
      self.apply(event)
    end
  end
  self:_forget_applied()
  if #events >= M.PAGE_SIZE then
    self:_request_backlog() -- a full page: there may be more
  elseif progressed or self.early[self.last + 1] ~= nil then
    self:_drain()
  else
    self:_skip_hole()
  end
end

--- Begin applying events after `last` (the point already rendered by other means).
function Sequencer:start(last)
  self.last = last
  self:_forget_applied()
  self:_drain()
end

--- Accept one live event.
function Sequencer:accept(event)
  local sequence = event.sequenceNumber
  if type(sequence) ~= 'number' or (self.last ~= nil and sequence <= self.last) then
    return
  end
  if self.early[sequence] == nil then
    self.early[sequence] = event
    self.early_count = self.early_count + 1
  end
  if self.last == nil then
    return -- not started: keep it until start()
  end
  if self.early_count > MAX_BUFFERED then
    self:_skip_hole()
    return
  end
  self:_drain()
end

--- Fetch whatever the log holds past the last applied event: for when no later event can
--- reveal a gap (the last event of a turn was lost, and the turn has gone quiet).
function Sequencer:refresh()
  if self.last ~= nil then
    self:_request_backlog()
  end
end

return M
