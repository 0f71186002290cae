--- Method names of the relavium-lsp protocol (mirrors relavium_lsp/server/methods.py).
local M = {}

M.START_SESSION = 'relavium/startSession'
M.SEND_MESSAGE = 'relavium/sendMessage'
M.ABORT_TURN = 'relavium/abortTurn'
M.CANCEL_SESSION = 'relavium/cancelSession'
M.RESUME_SESSION = 'relavium/resumeSession'
M.LIST_SESSIONS = 'relavium/listSessions'
M.GET_TRANSCRIPT = 'relavium/getTranscript'
M.SESSION_EVENTS = 'relavium/sessionEvents'
M.EXPORT_SESSION = 'relavium/exportSession'
M.LIST_AGENTS = 'relavium/listAgents'
M.LIST_TOOLS = 'relavium/listTools'

M.EDITOR_STATE = 'relavium/editorState' -- client -> server notification
M.SESSION_EVENT = 'relavium/sessionEvent' -- server -> client notification
M.REQUEST_APPROVAL = 'relavium/requestApproval' -- server -> client request
M.OPEN_UNTITLED = 'relavium/openUntitled' -- server -> client request

--- Approval choices shown to the user, in order, and the decision each one sends.
M.APPROVAL_CHOICES = { 'Approve', 'Reject', 'Always allow for this session' }
M.APPROVAL_DECISIONS = {
  ['Approve'] = 'approve',
  ['Reject'] = 'reject',
  ['Always allow for this session'] = 'approve_always',
}

return M
