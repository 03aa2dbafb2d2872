// VS Code (and Cursor, Windsurf, other forks) entry point: binds the commands to the editor UI.

const os = require('node:os');
const vscode = require('vscode');
const { lib, createCommands } = require('./commands.js');

/**
 * Registers "Lowdown: Wrap MCP servers", "Lowdown: Unwrap MCP servers" and "Lowdown: Show status".
 * @param {import('vscode').ExtensionContext} context
 */
function activate(context) {
  const channel = vscode.window.createOutputChannel('Lowdown');
  /** @type {import('./commands.js').Ui} */
  const ui = {
    show(text) {
      channel.clear();
      channel.append(text);
      channel.show(true);
    },
    async confirm(message, action) {
      return (await vscode.window.showWarningMessage(message, { modal: true }, action)) === action;
    },
    info: (m) => vscode.window.showInformationMessage(m),
    error: (m) => vscode.window.showErrorMessage(m),
  };
  for (const name of /** @type {const} */ (['wrap', 'unwrap', 'status'])) {
    context.subscriptions.push(
      vscode.commands.registerCommand(`lowdown.${name}`, async () => {
        try {
          const cwd = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath ?? os.homedir();
          await createCommands({ lib, ui, where: { cwd } })[name]();
        } catch (e) {
          const message = e && typeof e === 'object' && 'message' in e ? e.message : undefined;
          ui.error(`Lowdown: ${message ? message : e}`);
        }
      }),
    );
  }
  context.subscriptions.push(channel);
}

/** Nothing to clean up beyond the subscriptions. */
function deactivate() {}

module.exports = { activate, deactivate };
