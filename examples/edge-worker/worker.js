// A Cloudflare Worker whose outbound fetches are reported to Lowdown.
// Workers forbid compiling WebAssembly from bytes, so the module is imported compiled and
// handed to initSync; ctx.waitUntil keeps the isolate alive until delivery is done.
import { initSync, observe } from 'lowdown-observe';
import wasm from 'lowdown-observe/lowdown_bg.wasm';

initSync(wasm);

export default {
  async fetch(request, env, ctx) {
    const observed = observe(fetch, {
      apiUrl: env.LOWDOWN_API_URL,
      agentKey: env.PROWL_AGENT_KEY,
      waitUntil: ctx.waitUntil.bind(ctx),
    });
    const upstream = await observed('https://api.github.com/zen', { headers: { 'user-agent': 'lowdown-example' } });
    return new Response(await upstream.text());
  },
};
