/**
 * The Kubernetes manifests of docs/kubernetes/ fit together and fit agentd: the agent file of the ConfigMap is a
 * valid config once the Secret's keys are set, it binds where the Deployment's port and probes expect it, the
 * probes name the health routes (public ones), and the Service reaches the pods.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments, parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/index.ts';
import { createRoutes, type RoutesDeps } from '../../src/http/routes/index.ts';
import { ROOT } from '../support/paths.ts';
import { tableFeatures } from '../support/feature-mounts.ts';

const DIR = join(ROOT, 'docs/kubernetes');
type Manifest = { kind: string; metadata: { name: string; labels?: Record<string, string> }; [key: string]: any };
const kustomization = parse(readFileSync(join(DIR, 'kustomization.yaml'), 'utf8')) as { resources: string[] };
const manifests: Manifest[] = kustomization.resources.flatMap((file) =>
  parseAllDocuments(readFileSync(join(DIR, file), 'utf8')).map((d) => d.toJS() as Manifest),
);
const one = (kind: string) => {
  const found = manifests.filter((m) => m.kind === kind);
  expect(found, kind).toHaveLength(1);
  return found[0]!;
};

describe('docs/kubernetes', () => {
  const deployment = one('Deployment');
  const service = one('Service');
  const configMap = one('ConfigMap');
  const secret = one('Secret');
  const pod = deployment.spec.template.spec;
  const container = pod.containers[0];
  const port = container.ports.find((p: { name: string }) => p.name === 'http').containerPort as number;

  it('is a Deployment, a Service, a ConfigMap for the agent file and a Secret for the keys', () => {
    expect(manifests.map((m) => m.kind).sort()).toEqual(['ConfigMap', 'Deployment', 'Secret', 'Service']);
  });

  it("mounts the ConfigMap's agent file where --agent reads it, and the Secret's keys as the environment", () => {
    const mount = container.volumeMounts.find(
      (m: { name: string }) =>
        pod.volumes.find((v: any) => v.name === m.name)?.configMap?.name === configMap.metadata.name,
    );
    const agentArg = container.args[container.args.indexOf('--agent') + 1] as string;
    expect(agentArg).toBe(`${mount.mountPath}/agent.yml`);
    expect(Object.keys(configMap.data)).toEqual(['agent.yml']);
    expect(container.envFrom).toEqual([{ secretRef: { name: secret.metadata.name } }]);
  });

  it('holds an agent file agentd accepts once the Secret is filled in, bound to the container port, storing on the volume', () => {
    const file = parse(configMap.data['agent.yml'] as string) as unknown;
    const env = Object.fromEntries(
      Object.keys(secret.stringData as object).map((k) => [k, `${k.toLowerCase()}-0123456789abcdef`]),
    );
    const config = parseConfig(file, 'configmap.yaml', env);
    expect(config.server.host).toBe('0.0.0.0');
    expect(config.server.port).toBe(port);
    // A non-loopback bind is refused without a credential.
    expect(config.server.auth.apiKey).toBe(env.AGENTD_API_KEY);
    // Probes name the pod's IP as their Host: an allowedHosts list would refuse them.
    expect(config.server.allowedHosts).toEqual([]);
    expect(config.storage).toMatchObject({ type: 'jsonl' });
    const dataMount = container.volumeMounts.find((m: { name: string }) => m.name === 'data').mountPath as string;
    expect((config.storage as { dir: string }).dir.startsWith(`${dataMount}/`)).toBe(true);
    // Left empty, the Secret keeps agentd from starting.
    expect(() => parseConfig(file, 'configmap.yaml', Object.fromEntries(Object.keys(env).map((k) => [k, ''])))).toThrow(
      /apiKey/,
    );
  });

  it('probes liveness and readiness on the public health routes, on the container port', () => {
    const routes = createRoutes({ features: tableFeatures() } as unknown as RoutesDeps);
    const probe = (name: string) => container[name].httpGet as { path: string; port: string };
    expect(probe('livenessProbe')).toEqual({ path: '/api/health/live', port: 'http' });
    expect(probe('readinessProbe')).toEqual({ path: '/api/health/ready', port: 'http' });
    for (const path of ['/api/health/live', '/api/health/ready'])
      expect(routes.find((r) => r.path === path)?.scope).toBe('public');
  });

  it('runs as the image user, and the Service selects the pods on the http port', () => {
    const uid = /^USER (\d+):(\d+)$/m.exec(readFileSync(join(ROOT, 'Dockerfile'), 'utf8'));
    expect(pod.securityContext).toMatchObject({
      runAsNonRoot: true,
      runAsUser: Number(uid?.[1]),
      runAsGroup: Number(uid?.[2]),
    });
    expect(/^EXPOSE (\d+)$/m.exec(readFileSync(join(ROOT, 'Dockerfile'), 'utf8'))?.[1]).toBe(String(port));
    expect(deployment.spec.selector.matchLabels).toEqual(service.spec.selector);
    expect(deployment.spec.template.metadata.labels).toMatchObject(service.spec.selector);
    expect(service.spec.ports).toEqual([{ name: 'http', port, targetPort: 'http' }]);
  });
});
