/** `agentd init`: writes a commented agent file that validates against the schema; never overwrites without --force. */
import { writeFile } from 'node:fs/promises';
import { dirname, relative, resolve } from 'node:path';
import { parse } from 'yaml';
import { agentConfigSchema, PROVIDERS, type Provider } from '../config/schema.ts';
import { PROVIDER_PRESETS, type ProviderPreset } from '../llm/providers.ts';
import { packagePath } from '../package-info.ts';
import { DEFAULT_AGENT_FILE, type InitOptions } from './args.ts';

/** A model each provider serves, so a new file runs as written (edit it to taste). */
const USUAL_MODEL: Record<Provider, string> = {
  openai: 'gpt-4o-mini',
  'openai-compatible': 'my-model',
  ollama: 'llama3.2',
  vllm: 'Qwen/Qwen2.5-7B-Instruct',
  lmstudio: 'qwen2.5-7b-instruct',
  openrouter: 'openai/gpt-4o-mini',
  groq: 'llama-3.3-70b-versatile',
  together: 'meta-llama/Llama-3.3-70B-Instruct-Turbo',
  deepseek: 'deepseek-chat',
  mistral: 'mistral-small-latest',
  gemini: 'gemini-2.0-flash',
  anthropic: 'claude-3-5-haiku-latest',
};

const isProvider = (name: string): name is Provider => (PROVIDERS as readonly string[]).includes(name);

/** The text of a new agent file for `provider`/`model`; `schemaPath` is the schema as the file's folder reaches it. */
function agentFileText(provider: Provider, model: string, schemaPath: string): string {
  const preset: ProviderPreset = PROVIDER_PRESETS[provider];
  const endpoint = preset.baseURL
    ? `  # baseURL: ${preset.baseURL}   # the preset; set it to use another endpoint`
    : '  baseURL: http://127.0.0.1:8080/v1   # your OpenAI-compatible server';
  const key = preset.keyEnv
    ? `  # The key is read from $${preset.keyEnv}; or set apiKey: $MY_KEY_VARIABLE (never the key itself).`
    : '  # This provider needs no key; set apiKey: $MY_KEY_VARIABLE if yours does.';
  return `# yaml-language-server: $schema=${schemaPath}
# An agentd agent. Serve it with: agentd --agent <this file> (./agent.yml is the default).
# Every key is described in the schema above; \`$NAME\` and \`\${NAME}\` read the environment.
version: "1.0.0"
name: assistant
description: A helpful assistant.
systemPrompt: |
  You are a helpful assistant. Answer clearly and concisely.
  Use the tools you are given when they help.
llm:
  provider: ${provider}
  model: ${JSON.stringify(model)}
${endpoint}
${key}
  temperature: 0.7
# Tool servers (MCP). Each becomes a set of tools the model may call; \`required: true\` keeps
# /api/health/ready at 503 until that server is connected.
mcpServers: {}
#  filesystem:
#    type: stdio
#    command: npx
#    args: ["-y", "@modelcontextprotocol/server-filesystem", "/path/to/a/folder"]
#  search:
#    type: http
#    baseUrl: https://example.com/mcp
#    headers: { Authorization: "Bearer $SEARCH_TOKEN" }
# Ask a person before a tool runs: allow | ask | deny, first matching rule wins.
toolPolicy:
  default: allow
# Sessions are kept as JSON lines under dir (relative to this file); redis shares them across instances.
storage:
  type: jsonl
  dir: ./data/sessions
server:
  host: 127.0.0.1   # another address needs auth.apiKey
  port: 3001
#  auth:
#    apiKey: $AGENTD_API_KEY
`;
}

export async function init(options: InitOptions): Promise<void> {
  const provider = options.provider ?? 'openai';
  if (!isProvider(provider)) {
    process.stderr.write(`agentd init: unknown provider "${provider}"; one of: ${PROVIDERS.join(', ')}\n`);
    process.exit(2);
  }
  const file = resolve(options.file);
  const schemaPath = relative(dirname(file), packagePath('agents', 'agent.schema.json'));
  const model = options.model ?? USUAL_MODEL[provider];
  const text = agentFileText(provider, model, schemaPath);
  agentConfigSchema.parse(parse(text)); // a template that does not validate is our bug: fail loudly, write nothing
  try {
    await writeFile(file, text, { flag: options.force ? 'w' : 'wx' });
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    process.stderr.write(
      code === 'EEXIST'
        ? `agentd init: ${options.file} exists; use --force to overwrite it\n`
        : `agentd init: cannot write ${options.file}: ${(e as Error).message}\n`,
    );
    process.exit(1);
  }
  const serveFlag = options.file === DEFAULT_AGENT_FILE ? '' : ` --agent ${options.file}`;
  const { keyEnv }: ProviderPreset = PROVIDER_PRESETS[provider];
  const keyHint = keyEnv ? `  export ${keyEnv}=...\n` : '';
  process.stdout.write(
    `wrote ${options.file} (provider ${provider}, model ${model})\n\nNext:\n${keyHint}  agentd${serveFlag}\n`,
  );
}
