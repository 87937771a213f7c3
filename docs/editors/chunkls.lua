-- chunkls in Neovim's built-in LSP client, Neovim 0.7 or newer, no plugins.
-- Install: copy this file to ~/.config/nvim/plugin/chunkls.lua (or `dofile` it
-- from init.lua), with `chunkls` on your PATH (`uv tool install .`).
-- Set vim.g.chunkls_cmd = { "/path/to/chunkls", "serve" } before it loads to
-- run another chunkls.

local uv = vim.uv or vim.loop -- vim.uv from 0.10
local markers = { "pyproject.toml", ".git" }
local clients = {} -- root folder -> client id (Neovim 0.7 only)

-- The nearest folder above the buffer's file holding a marker, else the file's folder.
local function root_of(bufnr)
  local name = vim.api.nvim_buf_get_name(bufnr)
  local start = name ~= "" and vim.fn.fnamemodify(name, ":p:h") or uv.cwd()
  local dir = start
  while true do
    for _, marker in ipairs(markers) do
      if uv.fs_stat(dir .. "/" .. marker) then
        return dir
      end
    end
    local parent = vim.fn.fnamemodify(dir, ":h")
    if parent == dir then
      return start
    end
    dir = parent
  end
end

local function refresh_lenses()
  pcall(vim.lsp.codelens.refresh)
end

local function on_attach(_, bufnr)
  -- Neovim 0.7 maps neither: gd goes to a chunk, K previews it
  vim.keymap.set("n", "gd", vim.lsp.buf.definition, { buffer = bufnr })
  vim.keymap.set("n", "K", vim.lsp.buf.hover, { buffer = bufnr })
  vim.api.nvim_create_autocmd({ "BufEnter", "InsertLeave", "BufWritePost" }, {
    buffer = bufnr,
    callback = refresh_lenses,
  })
  refresh_lenses()
end

local function attach(args)
  local bufnr = args.buf
  if vim.bo[bufnr].buftype ~= "" then
    return
  end
  local root = root_of(bufnr)
  local config = {
    name = "chunkls",
    cmd = vim.g.chunkls_cmd or { "chunkls", "serve" },
    root_dir = root,
    workspace_folders = { { uri = vim.uri_from_fname(root), name = root } },
    init_options = { codeLens = { enabled = true } },
    on_attach = on_attach,
  }
  if vim.lsp.start then -- Neovim 0.8+: reuses the client of the same name and root
    vim.lsp.start(config, { bufnr = bufnr })
    return
  end
  local id = clients[root]
  local client = id and vim.lsp.get_client_by_id(id)
  if not client or client.is_stopped() then
    id = vim.lsp.start_client(config)
    clients[root] = id
  end
  if id then
    vim.lsp.buf_attach_client(bufnr, id)
  end
end

local group = vim.api.nvim_create_augroup("chunkls", { clear = true })
-- JSON Lines session logs (an agent's): a Neovim that gives them no filetype gets one
vim.api.nvim_create_autocmd({ "BufRead", "BufNewFile" }, {
  group = group,
  pattern = { "*.jsonl", "*.ndjson" },
  command = "setfiletype jsonl",
})
vim.api.nvim_create_autocmd("FileType", {
  group = group,
  pattern = { "python", "markdown", "text", "json", "jsonc", "jsonl" },
  callback = attach,
})

-- The two lens commands are the client's to implement.
vim.lsp.commands["chunkls.copyChunkId"] = function(command)
  vim.fn.setreg("+", command.arguments[1])
  vim.notify("Copied chunk ID " .. command.arguments[1])
end
vim.lsp.commands["chunkls.showReferences"] = function()
  vim.lsp.buf.references()
end
