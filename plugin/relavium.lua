-- relavium.nvim commands (see `:help relavium`). Needs Neovim 0.7 or newer.
if vim.g.loaded_relavium or vim.fn.has('nvim-0.7') == 0 then
  return
end
vim.g.loaded_relavium = true

local function relavium()
  return require('relavium')
end

local command = vim.api.nvim_create_user_command

command('RelaviumChat', function(opts)
  relavium().chat(opts.args)
end, {
  nargs = '*',
  complete = function()
    return { 'agent=', 'model=' }
  end,
  desc = 'Relavium: open a chat with a new session [agent=…] [model=…]',
})

command('RelaviumSetup', function()
  relavium().setup_model()
end, { desc = 'Relavium: set up a real model (provider, model, API key in the OS keychain)' })

command('RelaviumModel', function(opts)
  relavium().model(opts.args)
end, { nargs = '?', desc = 'Relavium: switch the chat model from the next turn [model]' })

command('RelaviumAgent', function(opts)
  relavium().agent(opts.args)
end, { nargs = '?', desc = 'Relavium: open a chat with an agent (picker without one)' })

command('RelaviumRetry', function()
  relavium().retry()
end, { desc = 'Relavium: send the last message again, in a fork before it' })

command('RelaviumEdit', function()
  relavium().edit()
end, { desc = 'Relavium: edit the last message, in a fork before it' })

command('RelaviumCompose', function()
  relavium().compose()
end, { desc = 'Relavium: write a message (@file, #selection, /commands)' })

command('RelaviumYank', function()
  relavium().yank()
end, { desc = 'Relavium: yank a code block of the chat' })

command('RelaviumSend', function(opts)
  relavium().send(opts.args)
end, { nargs = '+', desc = 'Relavium: send a message in the current chat' })

command('RelaviumAsk', function(opts)
  relavium().ask(opts.args, opts.line1, opts.line2)
end, { nargs = '*', range = true, desc = 'Relavium: ask about the selected lines' })

command('RelaviumAbort', function()
  relavium().abort()
end, { desc = 'Relavium: abort the running turn' })

command('RelaviumOutput', function(opts)
  relavium().output(opts.args)
end, {
  nargs = '?',
  complete = function()
    return require('relavium.output').call_ids()
  end,
  desc = 'Relavium: show the live output of the latest command [callId]',
})

command('RelaviumMemory', function()
  relavium().memory()
end, { desc = "Relavium: edit the workspace's long-term memory (:w saves it)" })

command('RelaviumMemoryProposals', function()
  relavium().memory_proposals()
end, { desc = 'Relavium: review proposed workspace-memory notes (a: accept, r: reject)' })

command('RelaviumSessions', function()
  relavium().sessions()
end, { desc = 'Relavium: search sessions and resume one' })

command('RelaviumSessionList', function()
  relavium().session_list()
end, { desc = 'Relavium: a session list that updates by itself' })

command('RelaviumResume', function(opts)
  relavium().resume(opts.args)
end, { nargs = 1, desc = 'Relavium: resume a session by id' })

command('RelaviumRewind', function(opts)
  relavium().rewind(opts.args ~= '' and opts.args or nil)
end, { nargs = '?', desc = 'Relavium: rewind files and conversation to before a turn [message]' })

command('RelaviumChanges', function(opts)
  relavium().changes(opts.args ~= '' and opts.args or nil)
end, {
  nargs = '?',
  desc = "Relavium: review a turn's changed files: diff, keep or undo each [message]",
})

command('RelaviumExport', function(opts)
  relavium().export(opts.args)
end, {
  nargs = '?',
  complete = function()
    return { 'workflow', 'jsonl' }
  end,
  desc = 'Relavium: export the session to a new buffer [workflow|jsonl]',
})

command('RelaviumReplay', function(opts)
  relavium().replay(opts.args)
end, {
  nargs = '*',
  complete = function()
    return { 'auto', 'recorded', 'live', 'mixed' }
  end,
  desc = 'Relavium: replay the session from its recordings into a new chat [mode] [tools…]',
})

command('RelaviumInstall', function(opts)
  require('relavium.install').command(opts.args)
end, {
  nargs = '?',
  complete = function()
    return require('relavium.install').METHODS
  end,
  desc = 'Relavium: install or upgrade the server [uv|pipx|venv]',
})
