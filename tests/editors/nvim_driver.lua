-- Drives Neovim (0.7+) with docs/editors/chunkls.lua loaded: go to definition,
-- hover, workspace symbols, a diagnostic, then rename a function and save.
-- Reads CHUNKLS_WORKSPACE, writes a JSON object to CHUNKLS_RESULT, exits.
local workspace = os.getenv("CHUNKLS_WORKSPACE")
local result_file = os.getenv("CHUNKLS_RESULT")
local results = { version = vim.version() and tostring(vim.version().minor) }
local STEP = 20000 -- ms: the longest wait for any one answer

local function finish(code)
  vim.fn.writefile({ vim.fn.json_encode(results) }, result_file)
  vim.cmd("cquit " .. code)
end

vim.defer_fn(function()
  results.error = "watchdog: the driver took too long"
  finish(2)
end, 120000)

local function position_of(bufnr, needle, inside)
  for i, line in ipairs(vim.api.nvim_buf_get_lines(bufnr, 0, -1, false)) do
    local col = line:find(needle, 1, true)
    if col then
      return { line = i - 1, character = col - 1 + (inside or 2) }
    end
  end
  error("not in the buffer: " .. needle)
end

local function request(bufnr, method, params)
  local answers, err = vim.lsp.buf_request_sync(bufnr, method, params, STEP)
  if not answers then
    error(method .. ": " .. tostring(err))
  end
  for _, answer in pairs(answers) do
    if answer.error then
      error(method .. ": " .. vim.inspect(answer.error))
    end
    return answer.result
  end
  return nil
end

local function at(bufnr, needle)
  return {
    textDocument = { uri = vim.uri_from_bufnr(bufnr) },
    position = position_of(bufnr, needle),
  }
end

local function locations(bufnr, needle)
  local found = request(bufnr, "textDocument/definition", at(bufnr, needle)) or {}
  if found.uri or found.targetUri then
    found = { found }
  end
  local out = {}
  for _, loc in ipairs(found) do
    local range = loc.targetSelectionRange or loc.range
    table.insert(out, {
      path = vim.uri_to_fname(loc.targetUri or loc.uri),
      line = range.start.line + 1,
    })
  end
  return out
end

-- The definition of the ID at `needle`, waiting (bounded) until it resolves.
local function eventual_locations(bufnr, needle)
  local found = {}
  vim.wait(STEP, function()
    found = locations(bufnr, needle)
    return #found > 0
  end, 200)
  return found
end

local function diagnostics(bufnr)
  local out = {}
  for _, d in ipairs(vim.diagnostic.get(bufnr)) do
    table.insert(out, { line = d.lnum + 1, message = d.message })
  end
  return out
end

local function any_on(list, line)
  for _, d in ipairs(list) do
    if d.line == line then
      return true
    end
  end
  return false
end

local function run()
  vim.cmd("edit " .. vim.fn.fnameescape(workspace .. "/notes/editor.md"))
  local note = vim.api.nvim_get_current_buf()
  results.filetype = vim.bo[note].filetype
  local attached = vim.wait(STEP, function()
    local clients = vim.lsp.get_clients and vim.lsp.get_clients({ bufnr = note })
      or vim.lsp.buf_get_clients(note)
    return next(clients) ~= nil
  end, 50)
  results.attached = attached

  -- definition: wait until the server has indexed (every wait bounded)
  results.definition = eventual_locations(note, "app/greet.py#function-greet")

  -- `gd`, as a user types it, jumps to it
  vim.api.nvim_win_set_cursor(0, { position_of(note, "app/greet.py#function-greet").line + 1, 20 })
  vim.cmd("normal gd")
  vim.wait(STEP, function()
    return vim.api.nvim_buf_get_name(0):sub(-12) == "app/greet.py"
  end, 50)
  results.jump = { path = vim.api.nvim_buf_get_name(0), line = vim.api.nvim_win_get_cursor(0)[1] }
  vim.cmd("buffer " .. note)

  -- an agent's JSON Lines session log: attached, its escaped ID resolves
  vim.cmd("edit " .. vim.fn.fnameescape(workspace .. "/notes/session.jsonl"))
  local session = vim.api.nvim_get_current_buf()
  results.jsonl_filetype = vim.bo[session].filetype
  results.jsonl_definition = eventual_locations(session, "app\\/greet.py#function-greet")
  vim.cmd("buffer " .. note)

  local hover = request(note, "textDocument/hover", at(note, "app/greet.py#function-greet"))
  results.hover = hover and hover.contents and (hover.contents.value or hover.contents) or vim.NIL

  local symbols = request(note, "workspace/symbol", { query = "greeting" }) or {}
  results.symbols = {}
  for _, s in ipairs(symbols) do
    table.insert(results.symbols, s.name)
  end

  local salute = position_of(note, "app/greet.py#function-salute").line + 1
  vim.wait(STEP, function()
    return any_on(diagnostics(note), salute)
  end, 100)
  results.diagnostics_before = diagnostics(note)

  -- rename greet() to salute() in app/greet.py and save
  vim.cmd("edit " .. vim.fn.fnameescape(workspace .. "/app/greet.py"))
  local source = vim.api.nvim_get_current_buf()
  local line = position_of(source, "def greet(name", 0).line
  local text = vim.api.nvim_buf_get_lines(source, line, line + 1, false)[1]
  vim.api.nvim_buf_set_lines(source, line, line + 1, false, { (text:gsub("def greet", "def salute")) })
  vim.cmd("write")
  vim.cmd("buffer " .. note)

  results.definition_after_save = eventual_locations(note, "app/greet.py#function-salute")
  results.old_definition_after_save = locations(note, "app/greet.py#function-greet")
  vim.wait(STEP, function()
    return not any_on(diagnostics(note), salute)
  end, 100)
  results.diagnostics_after = diagnostics(note)
end

local ok, err = pcall(run)
if not ok then
  results.error = tostring(err)
  finish(1)
end
finish(0)
