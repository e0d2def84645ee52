-- DICE for Neovim 0.7+: starts `dice-lsp` for CUDA buffers with vim.lsp.start_client and
-- attaches buffers with vim.lsp.buf_attach_client (no plugin dependencies).
local M = {}

M.defaults = {
  cmd = { "dice-lsp" },
  filetypes = { "cuda" },
  -- The project root is the nearest folder above the file that holds one of these.
  root_markers = { ".git", "pyproject.toml", "CMakeLists.txt", "Makefile" },
  -- Show generation progress in the message area and the final status with vim.notify.
  notify = true,
  -- The `dice` section: sent as initializationOptions and answered to workspace/configuration.
  settings = {
    dice = {
      arch = "sm_90",
      nvccFlags = {},
      includePaths = {},
      gpu = { enabled = false }, -- the only switch that lets DICE run kernels on your GPU
      budget = 24,
      regenerateOnSave = true,
      -- false: a generation writes its region once, when the search ends (one `u` undoes it);
      -- true: each better kernel is written as it is found (one undo step per round).
      streamEdits = false,
    },
  },
  -- How long a save waits for kernels the server already has for changed intents (ms).
  save_wait_ms = 1500,
  -- How long quitting (:wq, :x, ZZ, :q, :qa) waits for the kernels a save is still regenerating,
  -- so that they are written to disk before Neovim exits (ms; <C-c> stops waiting, 0 never waits).
  quit_wait_ms = 30000,
}

M.status = {} -- the last dice/status notification: { arch, gpu, progress }
M.last = nil -- the last generation's final status ("done: …", "stopped: …", "failed: …")

local config = nil
local clients = {} -- root_dir -> client id

--- The project root of `path`: the nearest folder at or above the file's folder that holds one
--- of `markers` (a file such as CMakeLists.txt or a folder such as .git), else the file's folder.
function M.root_dir(path, markers)
  local dir = vim.fn.fnamemodify(path, ":p:h")
  local folder = dir
  while true do
    for _, marker in ipairs(markers or (config or M.defaults).root_markers) do
      local candidate = folder .. "/" .. marker
      if vim.fn.filereadable(candidate) == 1 or vim.fn.isdirectory(candidate) == 1 then
        return folder
      end
    end
    local parent = vim.fn.fnamemodify(folder, ":h")
    if parent == folder then
      return dir
    end
    folder = parent
  end
end

--- The server's log file, as dice-lsp chooses it (--log-file in cmd, else $XDG_STATE_HOME/dice).
function M.log_file()
  local cmd = (config or M.defaults).cmd
  for i, arg in ipairs(cmd) do
    if arg == "--log-file" and cmd[i + 1] then
      return cmd[i + 1]
    end
  end
  local state = os.getenv("XDG_STATE_HOME")
  if state == nil or state == "" then
    state = vim.fn.expand("~/.local/state")
  end
  return state .. "/dice/dice-lsp.log"
end

local function level_of(message)
  if message:find("^failed") then
    return vim.log.levels.ERROR
  elseif message:find("^stopped") then
    return vim.log.levels.WARN
  end
  return vim.log.levels.INFO
end

-- $/progress of a generation: each round in the message area, the end with vim.notify.
-- Failures are already shown by the server's window/showMessage, so they are not repeated.
local function on_progress(err, result, ctx, handler_config)
  local default = vim.lsp.handlers["$/progress"]
  if default then
    default(err, result, ctx, handler_config)
  end
  local value = result and result.value
  if type(value) ~= "table" then
    return
  end
  if value.kind == "end" then
    local message = value.message or "done"
    M.last = message
    if config.notify and not message:find("^failed") then
      vim.notify("DICE: " .. message, level_of(message))
    end
  elseif config.notify and value.message then
    local title = value.title and (value.title:gsub("^DICE: ", "") .. ": ") or ""
    local text = "DICE: " .. title .. value.message
    vim.api.nvim_echo({ { text:sub(1, math.max(20, vim.o.columns - 12)) } }, false, {})
  end
end

-- The first line (0-based) each buffer's edits touch in a WorkspaceEdit.
local function first_edited_lines(edit)
  local first = {}
  local function note(uri, edits)
    local bufnr = vim.uri_to_bufnr(uri)
    for _, e in ipairs(edits or {}) do
      if e.range and (first[bufnr] == nil or e.range.start.line < first[bufnr]) then
        first[bufnr] = e.range.start.line
      end
    end
  end
  for _, change in ipairs(edit.documentChanges or {}) do
    if change.textDocument then
      note(change.textDocument.uri, change.edits)
    end
  end
  for uri, edits in pairs(edit.changes or {}) do
    note(uri, edits)
  end
  return first
end

-- workspace/applyEdit, keeping each window's cursor where it was when the edit lies below the
-- cursor's line: Neovim moves a cursor on the last line of the buffer to the end of text
-- inserted after that line (an intent on the last line would send it to the end of the kernel).
local function on_apply_edit(err, params, ctx, handler_config)
  local first = params and params.edit and first_edited_lines(params.edit) or {}
  local kept = {}
  for _, win in ipairs(vim.api.nvim_list_wins()) do
    local bufnr = vim.api.nvim_win_get_buf(win)
    local cursor = vim.api.nvim_win_get_cursor(win)
    if first[bufnr] ~= nil and cursor[1] - 1 < first[bufnr] then
      table.insert(kept, { win = win, cursor = cursor })
    end
  end
  local result = vim.lsp.handlers["workspace/applyEdit"](err, params, ctx, handler_config)
  for _, k in ipairs(kept) do
    if vim.api.nvim_win_is_valid(k.win) then
      pcall(vim.api.nvim_win_set_cursor, k.win, k.cursor)
    end
  end
  return result
end

-- dice/saveDocument: a regeneration that a save started has written its kernels; save again
-- so that they reach the disk, unless the buffer changed since the server wrote them.
local function on_save_document(_, params)
  local bufnr = params and params.uri and vim.uri_to_bufnr(params.uri)
  if not bufnr or not vim.api.nvim_buf_is_loaded(bufnr) then
    return
  end
  if vim.lsp.util.buf_versions[bufnr] == params.version and vim.bo[bufnr].modified then
    vim.api.nvim_buf_call(bufnr, function()
      vim.cmd("silent write")
    end)
  end
end

local function start(root)
  return vim.lsp.start_client({
    name = "dice",
    cmd = config.cmd,
    root_dir = root,
    init_options = config.settings.dice,
    settings = config.settings,
    handlers = {
      ["dice/status"] = function(_, result)
        M.status = result or {}
      end,
      ["$/progress"] = on_progress,
      ["workspace/applyEdit"] = on_apply_edit,
      ["dice/saveDocument"] = on_save_document,
    },
    on_init = function(client)
      client.notify("workspace/didChangeConfiguration", { settings = config.settings })
    end,
  })
end

--- Attach `bufnr` to the DICE server of its project, starting the server when needed.
function M.attach(bufnr)
  bufnr = (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
  local root = M.root_dir(vim.api.nvim_buf_get_name(bufnr))
  local id = clients[root]
  if id == nil or vim.lsp.get_client_by_id(id) == nil then
    id = start(root)
    clients[root] = id
  end
  if id ~= nil then
    vim.lsp.buf_attach_client(bufnr, id)
  end
  return id
end

local function client_for(bufnr)
  -- vim.lsp.get_clients (0.10+) replaces buf_get_clients (0.7-0.9, deprecated later).
  local attached = vim.lsp.get_clients and vim.lsp.get_clients({ bufnr = bufnr }) or vim.lsp.buf_get_clients(bufnr)
  for _, client in pairs(attached) do
    if client.name == "dice" then
      return client
    end
  end
  return nil
end

local function execute(client, bufnr, action, on_done)
  local function run(command)
    local params = { command = command.command, arguments = command.arguments }
    client.request("workspace/executeCommand", params, function(err, result)
      if err then
        vim.notify("DICE: " .. (err.message or vim.inspect(err)), vim.log.levels.ERROR)
      end -- result.error reaches the user through the server's window/showMessage
      if on_done then
        on_done(err, result)
      end
    end, bufnr)
  end
  if action.edit then
    vim.lsp.util.apply_workspace_edit(action.edit, client.offset_encoding)
    if on_done then
      on_done(nil, { applied = 1 })
    end
  elseif action.command then
    run(action.command)
  else
    client.request("codeAction/resolve", action, function(err, resolved)
      if err or not resolved then
        vim.notify("DICE: could not resolve the action", vim.log.levels.ERROR)
        return
      end
      execute(client, bufnr, resolved, on_done)
    end, bufnr)
  end
end

--- Run a DICE code action on the intent at the cursor (or at opts.line, 0-based).
--- opts.title: the action title prefix ("DICE: Generate kernel" matches Generate and Regenerate
--- is "DICE: Regenerate kernel"; "DICE: Tune for" tunes). opts.on_done(err, result) when finished.
function M.generate(opts)
  opts = opts or {}
  local bufnr = opts.bufnr or vim.api.nvim_get_current_buf()
  local client = client_for(bufnr)
  if client == nil then
    vim.notify("DICE: the language server is not attached to this buffer", vim.log.levels.WARN)
    return
  end
  local line = opts.line or (vim.api.nvim_win_get_cursor(0)[1] - 1)
  local params = {
    textDocument = vim.lsp.util.make_text_document_params(bufnr),
    range = { start = { line = line, character = 0 }, ["end"] = { line = line, character = 0 } },
    context = { diagnostics = {} },
  }
  client.request("textDocument/codeAction", params, function(err, actions)
    if err or not actions then
      vim.notify("DICE: no actions here", vim.log.levels.WARN)
      return
    end
    for _, action in ipairs(actions) do
      local title = action.title or ""
      local wanted = opts.title
      local matches = wanted and title:sub(1, #wanted) == wanted
        or (not wanted and (title:find("^DICE: Generate kernel") or title:find("^DICE: Regenerate kernel")))
      if matches then
        execute(client, bufnr, action, opts.on_done)
        return
      end
    end
    vim.notify("DICE: put the cursor on a // @dice: intent", vim.log.levels.INFO)
  end, bufnr)
end

--- Before a buffer is written: the kernels the server already has for changed intents go
--- into the text being saved (textDocument/willSaveWaitUntil; Neovim 0.7 does not send it).
function M.will_save(bufnr)
  local client = client_for(bufnr)
  local sync = client and client.server_capabilities and client.server_capabilities.textDocumentSync
  if type(sync) ~= "table" or not sync.willSaveWaitUntil then
    return
  end
  local params = { textDocument = vim.lsp.util.make_text_document_params(bufnr), reason = 1 }
  local response = client.request_sync("textDocument/willSaveWaitUntil", params, config.save_wait_ms, bufnr)
  local edits = response and response.result
  if type(edits) == "table" and #edits > 0 then
    vim.lsp.util.apply_text_edits(edits, bufnr, client.offset_encoding)
  end
end

--- Before quitting: for each buffer of a DICE server, wait (at most config.quit_wait_ms in
--- all; <C-c> stops) until the regenerations its last save started have written their kernels,
--- and write the buffer when the server asks for that second save, so that `:wq` leaves the
--- regenerated kernels on disk rather than exiting while they are still being made.
function M.await_saves()
  if config.quit_wait_ms <= 0 then
    return
  end
  local deadline = vim.loop.now() + config.quit_wait_ms
  for _, bufnr in ipairs(vim.api.nvim_list_bufs()) do
    local client = vim.api.nvim_buf_is_loaded(bufnr) and client_for(bufnr)
    local left = deadline - vim.loop.now()
    if client and left > 0 then
      local uri = vim.uri_from_bufnr(bufnr)
      local response, why = client.request_sync("dice/awaitSave", { uri = uri }, left, bufnr)
      local answer = response and response.result
      if type(answer) == "table" and answer.save then
        on_save_document(nil, { uri = uri, version = answer.version })
      elseif why == "interrupted" then
        return
      end
    end
  end
end

--- Take the best kernel found so far by the running generation(s) of the buffer, and stop.
function M.accept(bufnr)
  bufnr = bufnr or vim.api.nvim_get_current_buf()
  local client = client_for(bufnr)
  if client == nil then
    return
  end
  local params = { command = "dice.accept", arguments = { { uri = vim.uri_from_bufnr(bufnr) } } }
  client.request("workspace/executeCommand", params, function(err, result)
    if err or not result or result.accepted == 0 then
      vim.notify("DICE: no generation is running in this buffer", vim.log.levels.INFO)
    end
  end, bufnr)
end

--- The configuration setup() made (nil before it ran).
function M.config()
  return config
end

--- The lines :DiceStatus prints: target, GPU runs, the running or last generation, servers, log.
function M.status_lines()
  local s = M.status or {}
  local lines = {
    "DICE target: " .. tostring(s.arch or (config and config.settings.dice.arch) or "?")
      .. (s.gpu and ", GPU runs on" or ", GPU runs off"),
    "generation: " .. (s.progress and s.progress ~= vim.NIL and ("running: " .. s.progress) or (M.last or "none yet")),
  }
  local roots = {}
  for root, id in pairs(clients) do
    if vim.lsp.get_client_by_id(id) ~= nil then
      table.insert(roots, root)
    end
  end
  table.sort(roots)
  table.insert(lines, "servers: " .. (#roots > 0 and table.concat(roots, ", ") or "none running"))
  table.insert(lines, "log: " .. M.log_file())
  return lines
end

function M.setup(opts)
  config = vim.tbl_deep_extend("force", M.defaults, opts or {})
  local group = vim.api.nvim_create_augroup("dice_lsp", { clear = true })
  vim.api.nvim_create_autocmd("FileType", {
    group = group,
    pattern = config.filetypes,
    callback = function(args)
      M.attach(args.buf)
    end,
  })
  vim.api.nvim_create_autocmd("BufWritePre", {
    group = group,
    callback = function(args)
      if client_for(args.buf) ~= nil then
        M.will_save(args.buf)
      end
    end,
  })
  -- QuitPre comes after the write of :wq, :x and ZZ (and before :q, :qa, whose ExitPre
  -- follows): the wait sits between that write and the exit.
  vim.api.nvim_create_autocmd({ "QuitPre", "ExitPre" }, {
    group = group,
    callback = function()
      M.await_saves()
    end,
  })
  vim.api.nvim_create_user_command("DiceGenerate", function()
    M.generate()
  end, { desc = "DICE: generate (or regenerate) the kernel of the intent at the cursor" })
  vim.api.nvim_create_user_command("DiceStatus", function()
    vim.api.nvim_echo({ { table.concat(M.status_lines(), "\n") } }, false, {})
  end, { desc = "DICE: target, GPU runs, the running or last generation, servers and log file" })
  vim.api.nvim_create_user_command("DiceAccept", function()
    M.accept()
  end, { desc = "DICE: write the best kernel found so far and stop the running generation" })
  vim.api.nvim_create_user_command("DiceTune", function()
    M.generate({ title = "DICE: Tune for" })
  end, { desc = "DICE: tune the kernel of the intent at the cursor for the configured arch" })
end

return M
