--- One reviewed file against the turn's checkpoint, in a tab of its own.
---
--- The review tab shows what the file held before the turn (a read-only scratch buffer) at
--- the left of the file itself, both in diff mode, with the review's quickfix list below.
--- Opening another file of the review replaces the tab's contents. In the checkpoint buffer
--- `a` keeps the file, `u` undoes it, `q` closes the tab; the file's own buffer gets no keys.
local M = {}

local api = vim.api
local state = { tab = nil } -- the review tab, while it is open

local function close_tab()
  local tab = state.tab
  state.tab = nil
  if not tab or not api.nvim_tabpage_is_valid(tab) or #api.nvim_list_tabpages() == 1 then
    return
  end
  -- Forced: the reviewed file is usually modified (agent edits are unsaved); closing its
  -- window only hides it, even without 'hidden' (Neovim 0.7's default).
  for _, win in ipairs(api.nvim_tabpage_list_wins(tab)) do
    if api.nvim_win_is_valid(win) then
      pcall(api.nvim_win_close, win, true)
    end
  end
end

--- Close the review tab (if open).
function M.close()
  close_tab()
end

local function scratch(name, lines, filetype)
  local bufnr = api.nvim_get_current_buf()
  vim.bo[bufnr].buftype = 'nofile'
  vim.bo[bufnr].bufhidden = 'wipe'
  vim.bo[bufnr].swapfile = false
  api.nvim_buf_set_lines(bufnr, 0, -1, false, lines)
  vim.bo[bufnr].modifiable = false
  pcall(api.nvim_buf_set_name, bufnr, name)
  if filetype and filetype ~= '' then
    vim.bo[bufnr].filetype = filetype
  end
  return bufnr
end

local function text_lines(text)
  local lines = vim.split(text or '', '\n', { plain = true })
  if #lines > 1 and lines[#lines] == '' then
    table.remove(lines) -- the final newline ends the last line
  end
  return lines
end

--- Open `view` = { review, file (a turnChanges entry), full_path, before (text or nil: the
--- turn created the file) } in the review tab.
function M.open(view)
  close_tab()
  vim.cmd('tabnew')
  state.tab = api.nvim_get_current_tabpage()
  local file = view.file
  local name = string.format('relavium://checkpoint/%d/%s', view.review.userSequence, file.path)
  if file.deleted and vim.fn.filereadable(view.full_path) == 0
    and vim.fn.bufloaded(view.full_path) == 0 then
    scratch('relavium://deleted/' .. file.path, {}, nil) -- gone: nothing to edit on the right
  else
    vim.cmd('edit ' .. vim.fn.fnameescape(view.full_path))
  end
  local filetype = vim.bo.filetype
  local file_win = api.nvim_get_current_win()
  vim.cmd('diffthis')
  vim.cmd('leftabove vnew')
  local bufnr = scratch(name, view.before and text_lines(view.before) or {}, filetype)
  vim.cmd('diffthis')
  local review = require('relavium.review')
  local function map(key, action, desc)
    vim.keymap.set('n', key, action, { buffer = bufnr, nowait = true,
      desc = 'Relavium review: ' .. desc })
  end
  map('a', function()
    review.decide(view.review, require('relavium.protocol').REVIEW_DECISION.KEEP, file.path)
  end, 'keep this file')
  map('u', function()
    review.decide(view.review, require('relavium.protocol').REVIEW_DECISION.UNDO, file.path)
  end, 'undo this file (back to before the turn)')
  map('q', close_tab, 'close the review tab')
  vim.cmd('botright copen')
  api.nvim_set_current_win(file_win)
  vim.cmd('normal! gg')
  if vim.fn.diff_hlID(1, 1) == 0 then
    pcall(vim.cmd, 'normal! ]c') -- to the first change
  end
  return { tab = state.tab, checkpoint = bufnr, file_win = file_win }
end

return M
