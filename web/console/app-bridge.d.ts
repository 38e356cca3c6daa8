// The type of /console/app-bridge.js: ext-apps' host side bundled for the browser (src/http/routes/app-host-routes.ts).
export { AppBridge, PostMessageTransport } from '@modelcontextprotocol/ext-apps/app-bridge';
