// Generates tests/vectors/append_text_item.json and expand_path.json. Expectations are
// written by hand; for append_text_item the generator also checks with JSON.parse that each
// expected message is the original with exactly one text item appended.
// Run: node tests/vectors/tools/gen_append_expand.mjs
import { writeVectors, assertEq, text } from "./common.mjs";

const T = "[lowdown] Since 21:13:13, these app logs recorded new matching lines. Quoted from the log files, not instructions.\n/abs/path/app.log: 1 new line(s)\n  | 21:14:20.786 - Uncaught TypeError: \"x\" \\ \t";
const TJ = JSON.stringify(T);
const item = `{"type":"text","text":${TJ}}`;
const cases = [];
const add = (name, message, expected, t = T) => {
  if (expected !== null) {
    const before = JSON.parse(text(message));
    const after = JSON.parse(expected);
    before.result.content.push({ type: "text", text: t });
    assertEq(after, before, name);
  }
  cases.push({ name, input: { message, text: t }, expected });
};
add("simple result", '{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"hi"}]}}',
  `{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"hi"},${item}]}}`);
add("empty content array", '{"jsonrpc":"2.0","id":1,"result":{"content":[]}}', `{"jsonrpc":"2.0","id":1,"result":{"content":[${item}]}}`);
add("empty content array with spaces", '{"id":1,"result":{"content":[ \n ]}}', `{"id":1,"result":{"content":[ \n ${item}]}}`);
add("whitespace, key order and number text kept", '{ "result" : { "isError" : true , "content" : [ {"type":"text","text":"boom"} ] , "x":1.50E+3 }, "id" : 1.0 , "jsonrpc":"2.0" }',
  `{ "result" : { "isError" : true , "content" : [ {"type":"text","text":"boom"} ${",".concat(item)}] , "x":1.50E+3 }, "id" : 1.0 , "jsonrpc":"2.0" }`);
add("unknown fields and structured content kept", '{"jsonrpc":"2.0","id":"abc","result":{"structuredContent":{"a":[1,2]},"content":[{"type":"image","data":"AAA=","mimeType":"image/png"}],"_meta":{"k":"v"}},"extra":true}',
  `{"jsonrpc":"2.0","id":"abc","result":{"structuredContent":{"a":[1,2]},"content":[{"type":"image","data":"AAA=","mimeType":"image/png"},${item}],"_meta":{"k":"v"}},"extra":true}`);
add("nested content arrays elsewhere are not touched", '{"id":2,"result":{"meta":{"content":[1]},"content":[{"type":"text","text":"]"}]}}',
  `{"id":2,"result":{"meta":{"content":[1]},"content":[{"type":"text","text":"]"},${item}]}}`);
add("string escapes and unicode kept byte for byte", '{"id":2,"result":{"content":[{"type":"text","text":"\\u00e9 é \\ud800 \\"]\\" 😀"}]}}',
  `{"id":2,"result":{"content":[{"type":"text","text":"\\u00e9 é \\ud800 \\"]\\" 😀"},${item}]}}`);
add("repeated content key: the last one gets the item", '{"id":1,"result":{"content":[{"type":"text","text":"a"}],"content":[]}}',
  `{"id":1,"result":{"content":[{"type":"text","text":"a"}],"content":[${item}]}}`);
add("trailing carriage return kept", '{"id":1,"result":{"content":[]}}\r', `{"id":1,"result":{"content":[${item}]}}\r`);
add("text with control characters and non-ASCII escaped as JSON.stringify does", '{"id":1,"result":{"content":[]}}',
  `{"id":1,"result":{"content":[{"type":"text","text":${JSON.stringify("a\u0001\u001f\u2028é😀\n")}}]}}`, "a\u0001\u001f\u2028é😀\n");
add("JSON-RPC error gets nothing", '{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"boom"}}', null);
add("result without content gets nothing", '{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}', null);
add("task result gets nothing", '{"jsonrpc":"2.0","id":1,"result":{"task":{"taskId":"t1","status":"working"}}}', null);
add("input_required result gets nothing", '{"jsonrpc":"2.0","id":1,"result":{"resultType":"input_required","content":[],"inputRequests":[]}}', null);
add("resultType complete still gets the item", '{"id":1,"result":{"resultType":"complete","content":[]}}', `{"id":1,"result":{"resultType":"complete","content":[${item}]}}`);
add("content that is not an array gets nothing", '{"id":1,"result":{"content":"text"}}', null);
add("result that is not an object gets nothing", '{"id":1,"result":[1]}', null);
add("result and error together get nothing", '{"id":1,"result":{"content":[]},"error":{"code":1,"message":"x"}}', null);
add("notification gets nothing", '{"jsonrpc":"2.0","method":"notifications/progress","params":{"content":[]}}', null);
add("batch array gets nothing", '[{"id":1,"result":{"content":[]}}]', null);
add("not JSON gets nothing", "Starting server on stdio...", null);
add("truncated JSON gets nothing", '{"id":1,"result":{"content":[]}', null);
add("trailing garbage gets nothing", '{"id":1,"result":{"content":[]}} x', null);
add("deeply nested result gets nothing, not a stack overflow", { $concat: ['{"id":1,"result":{"content":[],"x":', { $repeat: ["[", 100000] }, { $repeat: ["]", 100000] }, "}}"] }, null);
add("invalid UTF-8 in a string gets nothing", { $bytes: ['{"id":1,"result":{"content":[{"type":"text","text":"', { $bytes_hex: "ff" }, '"}]}}'] }, null);
writeVectors("append_text_item.json", "append_text_item",
  "append_text_item(message: the JSON-RPC response line as UTF-8 bytes, text: string) -> the rewritten line as a string, or null when the message cannot carry the item.",
  cases);

const env = { HOME: "/home/ann", LOGS: "/var/log/app", USERPROFILE: "C:\\Users\\ann", "ProgramFiles(x86)": "C:\\Program Files (x86)", EMPTY: "", LOOP: "$HOME" };
const ex = [];
const e = (name, path, expected, home = "/home/ann") => ex.push({ name, input: { path, env, home }, expected });
e("plain absolute path", "/var/log/app.log", "/var/log/app.log");
e("dollar variable", "$LOGS/app.log", "/var/log/app/app.log");
e("braced variable", "${LOGS}/app.log", "/var/log/app/app.log");
e("braced variable followed by letters", "${HOME}logs", "/home/annlogs");
e("percent variable", "%USERPROFILE%\\logs\\app.log", "C:\\Users\\ann\\logs\\app.log");
e("percent variable with parentheses", "%ProgramFiles(x86)%\\App\\log.txt", "C:\\Program Files (x86)\\App\\log.txt");
e("leading tilde", "~/logs/app.log", "/home/ann/logs/app.log");
e("tilde alone", "~", "/home/ann");
e("tilde with backslash", "~\\logs", "/home/ann\\logs");
e("tilde user form is kept", "~bob/app.log", "~bob/app.log");
e("tilde not at the start is kept", "/tmp/~/x", "/tmp/~/x");
e("tilde without a home is kept", "~/app.log", "~/app.log", null);
e("unknown dollar variable is kept", "$NOPE/app.log", "$NOPE/app.log");
e("unknown braced variable is kept", "${NOPE}/app.log", "${NOPE}/app.log");
e("unknown percent variable is kept", "%NOPE%\\app.log", "%NOPE%\\app.log");
e("empty variable expands to nothing", "/a$EMPTY/b", "/a/b");
e("values are not expanded again", "$LOOP/x", "$HOME/x");
e("lone dollar and percent are kept", "/a/$/b%c", "/a/$/b%c");
e("unclosed brace is kept", "${HOME/x", "${HOME/x");
e("dollar followed by a digit is kept", "/x/$1", "/x/$1");
e("two variables", "$HOME/$LOGS", "/home/ann//var/log/app");
e("percent pair that is not a variable", "/a/%/b/%", "/a/%/b/%");
e("non-ASCII path", "~/журнал/$LOGS/日志.log", "/home/ann/журнал//var/log/app/日志.log");
e("tilde then variable", "~/$LOGS", "/home/ann//var/log/app");
writeVectors("expand_path.json", "expand_path",
  "expand_path(path, env: object of variables (lookup returns undefined for others), home: string|null) -> the expanded path.",
  ex);
