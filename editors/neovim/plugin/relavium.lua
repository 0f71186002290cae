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
end, { nargs = '?', desc = 'Relavium: open a chat with a new session [agent]' })

command('RelaviumSend', function(opts)
  relavium().send(opts.args)
end, { nargs = '+', desc = 'Relavium: send a message in the current chat' })

command('RelaviumAsk', function(opts)
  relavium().ask(opts.args, opts.line1, opts.line2)
end, { nargs = '*', range = true, desc = 'Relavium: ask about the selected lines' })

command('RelaviumAbort', function()
  relavium().abort()
end, { desc = 'Relavium: abort the running turn' })

command('RelaviumSessions', function()
  relavium().sessions()
end, { desc = 'Relavium: search sessions and resume one' })

command('RelaviumSessionList', function()
  relavium().session_list()
end, { desc = 'Relavium: a session list that updates by itself' })

command('RelaviumResume', function(opts)
  relavium().resume(opts.args)
end, { nargs = 1, desc = 'Relavium: resume a session by id' })

command('RelaviumExport', function(opts)
  relavium().export(opts.args)
end, {
  nargs = '?',
  complete = function()
    return { 'workflow', 'jsonl' }
  end,
  desc = 'Relavium: export the session to a new buffer [workflow|jsonl]',
})
