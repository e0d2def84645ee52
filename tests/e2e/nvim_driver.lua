-- Drives Neovim headless for test_nvim.py: open a .cu, wait for diagnostics, run the generate
-- action, wait for the kernel in the buffer and the final status the user is told, read
-- :DiceStatus and a hover; write what happened as JSON.
-- Environment: DICE_NVIM_RTP (editors/nvim), DICE_LSP_CMD (JSON list), DICE_FILE, DICE_OUT,
-- DICE_INTENT_LINE (0-based).
local out = {}
local function finish()
  vim.fn.writefile({ vim.fn.json_encode(out) }, os.getenv("DICE_OUT"))
  vim.cmd("qall!")
end

out.notified = {} -- what vim.notify showed the user, in order
local shown = vim.notify
vim.notify = function(message, level, opts)
  table.insert(out.notified, { message = message, level = level or vim.NIL })
  return shown(message, level, opts)
end

local ok, err = pcall(function()
  vim.opt.runtimepath:append(os.getenv("DICE_NVIM_RTP"))
  local dice = require("dice")
  dice.setup({
    cmd = vim.fn.json_decode(os.getenv("DICE_LSP_CMD")),
    settings = { dice = { budget = 4, compileDebounceMs = 200 } },
  })
  vim.cmd("edit " .. vim.fn.fnameescape(os.getenv("DICE_FILE")))
  local bufnr = vim.api.nvim_get_current_buf()
  out.filetype = vim.bo[bufnr].filetype

  out.got_diagnostics = vim.wait(60000, function()
    return #vim.diagnostic.get(bufnr) > 0
  end, 50)
  out.diagnostics = {}
  for _, d in ipairs(vim.diagnostic.get(bufnr)) do
    table.insert(out.diagnostics, { lnum = d.lnum, code = d.code, message = d.message })
  end

  local done = false
  dice.generate({
    bufnr = bufnr,
    line = tonumber(os.getenv("DICE_INTENT_LINE")),
    on_done = function(e, result)
      out.generate_error = e and (e.message or vim.inspect(e)) or vim.NIL
      out.generate_result = result or vim.NIL
      done = true
    end,
  })
  out.generate_finished = vim.wait(120000, function()
    return done
  end, 50)
  out.text = table.concat(vim.api.nvim_buf_get_lines(bufnr, 0, -1, false), "\n")
  out.final_status_shown = vim.wait(10000, function()
    for _, n in ipairs(out.notified) do
      if n.message:find("^DICE: done") then
        return true
      end
    end
    return false
  end, 50)
  out.dice_status = vim.api.nvim_exec("DiceStatus", true)

  local kernel_line, kernel_col
  for i, line in ipairs(vim.api.nvim_buf_get_lines(bufnr, 0, -1, false)) do
    local s = line:find("__global__")
    if s and not kernel_line then
      local paren = line:find("%(")
      kernel_line, kernel_col = i - 1, (line:find("_kernel%(") or paren) - 1
    end
  end
  if kernel_line then
    local params = {
      textDocument = vim.lsp.util.make_text_document_params(bufnr),
      position = { line = kernel_line, character = kernel_col },
    }
    local responses = vim.lsp.buf_request_sync(bufnr, "textDocument/hover", params, 20000) or {}
    for _, response in pairs(responses) do
      if response.result and response.result.contents then
        out.hover = response.result.contents.value
      end
    end
  end
end)
if not ok then
  out.lua_error = tostring(err)
end
finish()
