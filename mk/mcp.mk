# lowdown-mcp, `lowdown-proxy wrap|unwrap|status` and the editor extension (npm/).

# The extension's packaging tools are installed by `make package` only (not by `make setup`):
# the tests do not need them. test-proxy's `npm test` also runs these test files; this
# target runs just this part.
TEST_TARGETS += test-mcp-wrap

EXT_DIR := npm/vscode-extension
VSIX := $(EXT_DIR)/lowdown-mcp-wrap.vsix

.PHONY: setup-vscode-extension test-mcp-wrap package

setup-vscode-extension: ## the editor extension's build tools (@vscode/vsce), from its lockfile
	@test -x $(EXT_DIR)/node_modules/.bin/vsce || (cd $(EXT_DIR) && npm ci --no-audit --no-fund)

test-mcp-wrap: ## lowdown-mcp against a real lowdown-server, config wrap/unwrap, the extension's commands
	@test -d npm/node_modules/@modelcontextprotocol/sdk || { echo "npm/node_modules is missing: run make setup"; exit 1; }
	cargo build -p lowdown-server
	cd npm && node --test --test-concurrency=1 test/mcp*.test.js test/wrap*.test.js

package: setup-vscode-extension ## build the editor extension npm/vscode-extension/lowdown-mcp-wrap.vsix with @vscode/vsce
	cd $(EXT_DIR) && npm run --silent package
	@echo "built $(VSIX)"
