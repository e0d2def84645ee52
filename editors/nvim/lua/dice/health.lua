-- :checkhealth dice — whether setup ran, the server starts, nvcc is found, and where the log is.
-- Neovim 0.7 has require("health").report_*; 0.9+ has vim.health.start/ok/warn/error.
local M = {}

local function reporter()
  local h = vim.health or require("health")
  return {
    start = h.start or h.report_start,
    ok = h.ok or h.report_ok,
    warn = h.warn or h.report_warn,
    error = h.error or h.report_error,
    info = h.info or h.report_info,
  }
end

function M.check()
  local report = reporter()
  local dice = require("dice")
  report.start("DICE")
  if vim.fn.has("nvim-0.7") == 1 then
    report.ok("Neovim " .. tostring(vim.version().major) .. "." .. tostring(vim.version().minor))
  else
    report.error("Neovim 0.7 or newer is needed")
  end
  if vim.fn.exists(":DiceGenerate") == 2 then
    report.ok('setup() ran (:DiceGenerate, :DiceTune and :DiceStatus exist)')
  else
    report.warn('require("dice").setup() has not run: CUDA buffers are not attached')
  end

  local cmd = (dice.config() or dice.defaults).cmd
  local exe = cmd[1]
  if vim.fn.executable(exe) == 1 then
    local version = vim.fn.system(vim.list_extend(vim.deepcopy(cmd), { "--version" }))
    if vim.v.shell_error == 0 then
      report.ok("language server: " .. vim.trim(version) .. " (" .. vim.fn.exepath(exe) .. ")")
    else
      report.error("`" .. table.concat(cmd, " ") .. " --version` failed: " .. vim.trim(version),
        { "from the DICE checkout: python3 -m venv .venv && .venv/bin/pip install -e .",
          'then setup({ cmd = { "/path/to/dice/.venv/bin/dice-lsp" } })' })
    end
  else
    report.error("language server `" .. exe .. "` not found on PATH",
      { "from the DICE checkout: python3 -m venv .venv && .venv/bin/pip install -e .",
        'then setup({ cmd = { "/path/to/dice/.venv/bin/dice-lsp" } }) or put .venv/bin on PATH' })
  end

  local nvcc = os.getenv("DICE_NVCC")
  if (nvcc and vim.fn.executable(nvcc) == 1) or vim.fn.executable("nvcc") == 1 then
    report.ok("nvcc: " .. (nvcc or vim.fn.exepath("nvcc")))
  else
    report.warn("nvcc not found: compiler findings and generation need the CUDA Toolkit",
      { "put the toolkit's bin/ on PATH, or set dice.nvccPath" })
  end
  report.info("log file: " .. dice.log_file())
end

return M
