// The client the MCP conformance suite runs for each client scenario (`conformance client --command …`):
// agentd (at AGENTD_URL, admin key AGENTD_KEY) plays the client, driven as a user would drive it, through its
// public REST routes only. For the scenario named by MCP_CONFORMANCE_SCENARIO (server URL: the last argument;
// MCP_CONFORMANCE_CONTEXT: what the scenario gives its client, e.g. pre-registered credentials) it connects the
// server (POST /api/connect-server, the agent file's `mcpServers` entry), signs in where agentd reports an
// authorization URL (as a browser: the authorization server redirects to agentd's callback), lists the tools and
// calls what the scenario expects through POST …/tools/:name/execute (or, where a person answers a question,
// through a session's turn), and removes the server. Exits 1 when a step fails; prints each step on stderr.
const agentd = process.env.AGENTD_URL;
const serverUrl = process.argv.at(-1);
const scenario = process.env.MCP_CONFORMANCE_SCENARIO ?? '';
const version = process.env.MCP_CONFORMANCE_PROTOCOL_VERSION;
const context = JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT ?? '{}');
const name = `c-${scenario.replace(/[^a-z0-9]+/gi, '-')}-${process.pid}`.slice(0, 64);
/** Sign-ins a user would try before giving up (agentd stops offering them sooner: oauth.maxSignIns). */
const USER_PATIENCE = 6;

const headers = {
  'content-type': 'application/json',
  ...(process.env.AGENTD_KEY && { authorization: `Bearer ${process.env.AGENTD_KEY}` }),
};
const log = (line) => console.error(line.replace(/\s+/g, ' ').slice(0, 600));

class Refused extends Error {}

async function call(method, path, body) {
  const res = await fetch(`${agentd}${path}`, {
    method,
    headers,
    ...(body !== undefined && { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  log(`${method} ${path} → ${res.status} ${text}`);
  if (!res.ok) throw new Refused(`${method} ${path} answered ${res.status}: ${text.slice(0, 300)}`);
  return JSON.parse(text);
}

/** The server's record (GET /api/mcp/servers). */
const record = async () => (await call('GET', '/api/mcp/servers')).servers.find((s) => s.name === name);

/** Follows a sign-in URL as a browser would: the authorization server redirects to agentd's callback. */
async function signIn(url) {
  const authorize = await fetch(url, { redirect: 'manual' });
  const location = authorize.headers.get('location');
  log(`GET ${url} → ${authorize.status} ${location ?? ''}`);
  if (!location) throw new Error('the authorization server did not redirect');
  const landed = await fetch(location);
  const page = (await landed.text()).replace(/<[^>]*>/g, ' ');
  log(`GET ${location} → ${landed.status} ${page}`);
}

/** Runs `step`; while it fails and agentd offers a sign-in, signs in and tries again (as a patient user). */
async function withSignIn(step) {
  for (let signIns = 0; ; signIns++) {
    try {
      return await step();
    } catch (error) {
      if (!(error instanceof Refused)) throw error;
      const url = (await record())?.authorizationUrl;
      if (!url || signIns >= USER_PATIENCE) throw error;
      await signIn(url);
    }
  }
}

/** The `oauth` block of the server's config for an `auth/*` scenario (what its operator would write). */
function oauthConfig() {
  if (!scenario.startsWith('auth/')) return undefined;
  if (scenario === 'auth/pre-registration') return { clientId: context.client_id, clientSecret: context.client_secret };
  if (scenario === 'auth/client-credentials-basic')
    return { grant: 'client_credentials', clientId: context.client_id, clientSecret: context.client_secret };
  if (scenario === 'auth/client-credentials-jwt') {
    return {
      grant: 'client_credentials',
      clientId: context.client_id,
      privateKey: context.private_key_pem,
      ...(context.signing_algorithm && { signingAlgorithm: context.signing_algorithm }),
    };
  }
  // The URL the scenario's authorization server expects (it does not fetch the document).
  if (scenario === 'auth/basic-cimd')
    return { clientMetadataUrl: 'https://conformance-test.local/client-metadata.json' };
  return {};
}

/** Connects the server, signing in while agentd reports an authorization URL. */
async function connect(config) {
  const connected = await call('POST', '/api/connect-server', { name, config }).then(
    () => true,
    (error) => {
      if (error instanceof Refused) return false;
      throw error;
    },
  );
  for (let signIns = 0; !connected; signIns++) {
    const rec = await record();
    if (rec?.status === 'connected') return;
    if (!rec?.authorizationUrl || signIns >= USER_PATIENCE)
      throw new Error(`not connected: ${rec?.error ?? 'no record'}`);
    await signIn(rec.authorizationUrl);
  }
}

const execute = (tool, args = {}) =>
  withSignIn(() => call('POST', `/api/mcp/servers/${name}/tools/${encodeURIComponent(tool)}/execute`, args));
const listTools = async () => (await withSignIn(() => call('GET', `/api/mcp/servers/${name}/tools`))).tools;

/**
 * Asks the agent, in a session turn, to call `tool` (the simulator model follows the `[[tool:…]]` directive);
 * when the server asks a question during the call, runs `meanwhile`, then answers it with `answer` over REST.
 */
async function turnAnswering(tool, answer, meanwhile = async () => {}) {
  const sessionId = `conformance-${process.pid}-${tool}`;
  const turn = call('POST', '/api/message-sync', { sessionId, message: `[[tool:${tool} {}]]` });
  const failed = turn.then(
    () => false,
    () => true,
  );
  for (;;) {
    if (await Promise.race([failed, new Promise((resolve) => setTimeout(resolve, 50, false))])) break;
    const res = await fetch(`${agentd}/api/sessions/${sessionId}/elicitations`, { headers });
    const ask = res.ok ? (await res.json()).elicitations[0] : undefined;
    if (!ask) continue;
    log(`asked: ${JSON.stringify(ask)}`);
    await meanwhile();
    await call('POST', `/api/sessions/${sessionId}/elicitations/${ask.id}`, answer);
    break;
  }
  return turn;
}

/** Arguments a person fills in a tool's form: its required fields, each with a value of its type. */
function sampleArgs(schema = {}) {
  const sample = { string: 'x', integer: 1, number: 1, boolean: true, array: [], object: {} };
  return Object.fromEntries(
    (schema.required ?? []).map((field) => [field, sample[schema.properties?.[field]?.type] ?? 'x']),
  );
}

/** A form's values as a person gives them: a field left empty is left out (agentd checks the rest against the schema). */
const filled = (args) => Object.fromEntries(Object.entries(args).filter(([, value]) => value !== null));

/** What the user does once the server is connected, per scenario. */
async function use() {
  const tools = await listTools();
  if (scenario === 'json-schema-ref-no-deref' || scenario === 'request-metadata') return;
  if (scenario === 'elicitation-sep1034-client-defaults')
    return turnAnswering('test_client_elicitation_defaults', { action: 'accept', content: {} });
  if (scenario === 'json-schema-2020-12-preservation') {
    // The schema as agentd lists it goes back to the server, which compares it with the one it sent.
    const focal = tools.find((t) => t.name === 'json_schema_2020_12_tool');
    return execute('json_schema_echo', { schema: focal?.inputSchema });
  }
  if (scenario === 'http-custom-headers') {
    for (const { name: tool, arguments: args } of context.toolCalls ?? []) await execute(tool, filled(args));
    return;
  }
  if (scenario === 'http-invalid-tool-headers' || scenario === 'http-standard-headers') {
    // Every tool agentd offers is called (those it refused are not offered), then every resource and prompt.
    for (const tool of tools) await execute(tool.name, sampleArgs(tool.inputSchema));
    const { resources = [] } = await call('GET', `/api/mcp/servers/${name}/resources`).catch(() => ({}));
    for (const r of resources)
      await call('GET', `/api/mcp/servers/${name}/resources/read?uri=${encodeURIComponent(r.uri)}`);
    const { prompts = [] } = await call('GET', `/api/mcp/servers/${name}/prompts`).catch(() => ({}));
    for (const p of prompts)
      await call(
        'POST',
        `/api/mcp/servers/${name}/prompts/${encodeURIComponent(p.name)}/get`,
        sampleArgs({ required: (p.arguments ?? []).filter((a) => a.required).map((a) => a.name) }),
      );
    return;
  }
  if (scenario === 'sep-2322-client-request-state') {
    // The question of one call is open while another tool of the server is called (which must not see its state).
    await turnAnswering('test_mrtr_echo_state', { action: 'accept', content: { confirmed: true } }, () =>
      execute('test_mrtr_unrelated'),
    );
    await execute('test_mrtr_no_state');
    // Its result has no resultType: the SDK refuses it as invalid at 2026-07-28, and never retries it.
    await execute('test_mrtr_no_result_type').catch((error) => log(String(error)));
    return;
  }
  if (scenario.startsWith('auth/')) {
    if (tools.some((t) => t.name === 'test-tool')) await execute('test-tool');
    return;
  }
  if (tools[0]) await execute(tools[0].name, { a: 2, b: 3 });
}

try {
  if (!agentd || !serverUrl)
    throw new Error('usage: AGENTD_URL=<agentd> MCP_CONFORMANCE_SCENARIO=<name> agentd-client.mjs <server-url>');
  const oauth = oauthConfig();
  // protocolVersion stays `auto`: agentd finds the era the scenario's server speaks. The suite starts its scenarios
  // together, so on a loaded machine a first connect (sign-in discovery included) has taken over 20 s: 60 s per
  // request, within the suite's 90 s per scenario.
  const config = { type: 'http', baseUrl: serverUrl, timeout: 60_000, ...(oauth && { oauth }) };
  log(`scenario ${scenario} (${version ?? 'no version'})`);
  await connect(config);
  await use();
} catch (error) {
  log(String(error));
  process.exitCode = 1;
} finally {
  await call('DELETE', `/api/mcp/servers/${name}`).catch(() => {});
}
