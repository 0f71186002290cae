" The relavium chat buffer (lua/relavium/chat_buffer.lua): Markdown, plus the chat's own
" lines. Where Neovim's treesitter highlights the Markdown (b:ts_highlight: 0.8+ with the
" markdown parser, see chat_buffer.lua), only the chat's own lines are added here; elsewhere
" (Neovim 0.7, or no parser) Vim's Markdown syntax does the Markdown.
if exists('b:current_syntax')
  finish
endif

if !get(b:, 'ts_highlight', 0)
  runtime! syntax/markdown.vim
  unlet! b:current_syntax
  " Vim's Markdown marks every `_` inside a word as an error: paths and tool names have them
  syntax clear markdownError
endif

" A block's first line (tool call, result, reasoning, plan); its body is folded under it.
syntax match relaviumToolCall /^▸ .*$/ contains=relaviumFate
syntax match relaviumResultOk /^◂ .* ✓.*$/ contains=relaviumFate
syntax match relaviumResultFailed /^◂ .* ✗.*$/ contains=relaviumFate
syntax match relaviumApproval /^? approval: .*$/ contains=relaviumFate
syntax match relaviumDecision /^  → .*$/
syntax match relaviumTurnEnd /^── .* ──$/
syntax match relaviumError /^✗ .*$/
syntax match relaviumChanges /^  \d\+ files\? changed .*$/
syntax match relaviumReviewed /^  \%(✓ kept\|⟲ undone\): .*$/
" What became of a message, a call or a question when its turn ended early.
syntax match relaviumFate / · \%(cancelled\|Cancelled\|interrupted\)$/ contained
syntax match relaviumUserFate /^## You\zs · cancelled$/

highlight default link relaviumToolCall Function
highlight default link relaviumResultOk String
highlight default link relaviumResultFailed DiagnosticError
highlight default link relaviumApproval WarningMsg
highlight default link relaviumDecision Comment
highlight default link relaviumTurnEnd Comment
highlight default link relaviumError ErrorMsg
highlight default link relaviumChanges Special
highlight default link relaviumReviewed Comment
highlight default link relaviumFate WarningMsg
highlight default link relaviumUserFate WarningMsg

let b:current_syntax = 'relavium'
