/**
 * The v0.3 HTTP+JSON wire (`/v1/...` routes) as translations of v1.0's, so v1.0's methods serve both.
 * `sendRequestIn`: `message` or `request`, parts under `content`, data parts as `{ data: { data } }`, files as
 * `{ file: { fileWithUri | fileWithBytes, mimeType } }`; `configuration.blocking` is proto3's (absent: false,
 * answer at once), but no `configuration` at all waits, as v0.3 servers do. `streamResponseOut`: the reverse,
 * with `TASK_STATE_CANCELLED` (two L) and a status update's `final` set on a terminal state.
 */

type Json = Record<string, unknown>;
const asObject = (v: unknown): Json | undefined =>
  typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Json) : undefined;
const asList = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);

const TERMINAL = new Set(['TASK_STATE_COMPLETED', 'TASK_STATE_FAILED', 'TASK_STATE_CANCELED', 'TASK_STATE_REJECTED']);

function partIn(part: unknown): unknown {
  const p = asObject(part);
  if (!p) return part;
  const file = asObject(p.file);
  if (file) {
    const { fileWithUri, fileWithBytes, mimeType, name } = file;
    return {
      ...(fileWithUri !== undefined && { url: fileWithUri }),
      ...(fileWithBytes !== undefined && { raw: fileWithBytes }),
      ...(mimeType !== undefined && { mediaType: mimeType }),
      ...(name !== undefined && { filename: name }),
    };
  }
  const data = asObject(p.data);
  return data && 'data' in data ? { ...p, data: data.data } : part;
}

function messageIn(message: unknown): unknown {
  const m = asObject(message);
  if (!m) return message;
  const { content, ...rest } = m;
  return { ...rest, parts: asList(content ?? m.parts).map(partIn) };
}

export function sendRequestIn(body: unknown): unknown {
  const b = asObject(body);
  if (!b) return body;
  const { request, message, configuration, ...rest } = b;
  const config = asObject(configuration);
  // v0.3's proto names the message's push config `pushNotification`: as v1.0's `taskPushNotificationConfig`.
  const { pushNotification, ...kept } = config ?? {};
  const push = pushNotification === undefined ? {} : { taskPushNotificationConfig: pushConfigIn(pushNotification) };
  return {
    ...rest,
    message: messageIn(message ?? request),
    ...(config && { configuration: { ...kept, ...push, blocking: config.blocking === true } }),
  };
}

const partOut = (part: unknown): unknown => {
  const p = asObject(part);
  return p && 'data' in p ? { ...p, data: { data: p.data } } : part;
};

function messageOut(message: unknown): unknown {
  const m = asObject(message);
  if (!m) return message;
  const { parts, ...rest } = m;
  return { ...rest, content: asList(parts).map(partOut) };
}

function statusOut(status: unknown): Json | undefined {
  const s = asObject(status);
  if (!s) return undefined;
  return {
    ...s,
    state: s.state === 'TASK_STATE_CANCELED' ? 'TASK_STATE_CANCELLED' : s.state,
    ...(s.message !== undefined && { message: messageOut(s.message) }),
  };
}

const artifactOut = (artifact: unknown): unknown => {
  const a = asObject(artifact);
  return a ? { ...a, parts: asList(a.parts).map(partOut) } : artifact;
};

function taskOut(task: unknown): unknown {
  const t = asObject(task);
  if (!t) return task;
  return {
    ...t,
    status: statusOut(t.status),
    artifacts: asList(t.artifacts).map(artifactOut),
    history: asList(t.history).map(messageOut),
  };
}

/** A v1.0 result (a wrapped stream event, or a bare task) in v0.3's shape. */
export function streamResponseOut(result: unknown): unknown {
  const r = asObject(result);
  if (!r) return result;
  if (r.task !== undefined) return { task: taskOut(r.task) };
  const update = asObject(r.statusUpdate);
  if (update) {
    const status = statusOut(update.status);
    return { statusUpdate: { ...update, status, final: TERMINAL.has(String(asObject(update.status)?.state)) } };
  }
  const chunk = asObject(r.artifactUpdate);
  if (chunk) return { artifactUpdate: { ...chunk, artifact: artifactOut(chunk.artifact) } };
  return r.id !== undefined && r.status !== undefined ? taskOut(r) : r;
}

/** A v0.3 push config (`{ name?, pushNotificationConfig }`, or `{ config, configId }`) as v1.0's Create params. */
export function legacyPushConfigIn(body: unknown, taskId: string | undefined): unknown {
  const b = asObject(body);
  const outer = asObject(b?.config) ?? b;
  const c = asObject(outer?.pushNotificationConfig);
  if (!c) return { taskId };
  const config = pushConfigIn(c) as Record<string, unknown>;
  const id = config.id ?? b?.configId;
  return { taskId, ...config, ...(id !== undefined && id !== '' && { id }) };
}

/** A v0.3 proto push config (`{ id?, url, token?, authentication?: { schemes, credentials } }`) as v1.0's. */
function pushConfigIn(config: unknown): unknown {
  const c = asObject(config);
  if (!c) return config;
  const auth = asObject(c.authentication);
  const scheme = asList(auth?.schemes)[0];
  return {
    url: c.url,
    ...(c.id !== undefined && c.id !== '' && { id: c.id }),
    ...(c.token !== undefined && { token: c.token }),
    ...(typeof scheme === 'string' && { authentication: { scheme, credentials: auth?.credentials } }),
  };
}

function pushConfigOut(config: unknown): unknown {
  const c = asObject(config);
  if (!c) return config;
  const { taskId, authentication, ...rest } = c;
  const auth = asObject(authentication);
  return {
    name: `tasks/${String(taskId)}/pushNotificationConfigs/${String(c.id)}`,
    pushNotificationConfig: {
      ...rest,
      ...(auth && { authentication: { schemes: [auth.scheme], credentials: auth.credentials } }),
    },
  };
}

/** A v1.0 push config result (one, a list, or Delete's empty answer) in v0.3's proto JSON. */
export function legacyPushConfigOut(result: unknown): unknown {
  const r = asObject(result);
  if (!r) return result;
  if (Array.isArray(r.configs)) return { ...r, configs: r.configs.map(pushConfigOut) };
  return r.url === undefined ? r : pushConfigOut(r);
}
