// The command the MCP conformance suite runs for one client scenario (`conformance client --command …`):
// it makes agentd (at AGENTD_URL) the host, through its REST routes only, of the scenario's server (the
// URL given as the last argument): connects it at runtime (POST /api/connect-server; with `oauth: {}` when
// AGENTD_OAUTH is set, signing in as a browser would: the authorization URL of the server's record, then
// agentd's callback), calls the first tool it lists with the arguments in AGENTD_TOOL_ARGS (POST
// …/execute), and removes it. Prints what it did on stderr; exits 1 when a step fails. Not an adapter for
// every scenario: a probe of whether agentd connects and calls a tool.
const agentd = process.env.AGENTD_URL;
const serverUrl = process.argv.at(-1);
const args = JSON.parse(process.env.AGENTD_TOOL_ARGS ?? '{}');
const headers = { 'content-type': 'application/json', ...(process.env.AGENTD_KEY && { authorization: `Bearer ${process.env.AGENTD_KEY}` }) };
const call = async (method, path, body) => {
  const res = await fetch(`${agentd}${path}`, { method, headers, ...(body !== undefined && { body: JSON.stringify(body) }) });
  const text = await res.text();
  console.error(`${method} ${path} → ${res.status} ${text.slice(0, 500)}`);
  if (!res.ok) throw new Error(`${method} ${path} answered ${res.status}`);
  return JSON.parse(text);
};

const name = `conformance-${(process.env.MCP_CONFORMANCE_SCENARIO ?? 'x').replace(/[^a-z0-9]+/gi, '-')}-${process.pid}`;
const oauth = process.env.AGENTD_OAUTH !== undefined;
/** Follows the sign-in URL as a browser would: the authorization server redirects to agentd's callback. */
async function signIn() {
  const { servers } = await call('GET', '/api/mcp/servers');
  const url = servers.find((s) => s.name === name)?.authorizationUrl;
  if (!url) throw new Error('no authorizationUrl to sign in at');
  const authorize = await fetch(url, { redirect: 'manual' });
  const location = authorize.headers.get('location');
  console.error(`GET ${url} → ${authorize.status} ${location ?? ''}`);
  if (!location) throw new Error('the authorization server did not redirect');
  const landed = await fetch(location);
  console.error(`GET ${location} → ${landed.status} ${landed.ok ? "" : (await landed.text()).replace(/<[^>]*>/g, " ").replace(/\s+/g, " ").slice(0, 300)}`);
  if (!landed.ok) throw new Error(`the callback answered ${landed.status}`);
}

try {
  const config = { type: 'http', baseUrl: serverUrl, timeout: 10_000, ...(oauth && { oauth: {} }) };
  await call('POST', '/api/connect-server', { name, config }).catch(async (error) => {
    if (!oauth) throw error;
    await signIn();
  });
  const { tools } = await call('GET', `/api/mcp/servers/${name}/tools`);
  if (tools.length > 0) await call('POST', `/api/mcp/servers/${name}/tools/${encodeURIComponent(tools[0].name)}/execute`, args);
} catch (error) {
  console.error(String(error));
  process.exitCode = 1;
} finally {
  await call('DELETE', `/api/mcp/servers/${name}`).catch(() => {});
}
