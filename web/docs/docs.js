// @ts-check
// The docs page: swagger-ui over this service's own OpenAPI document. "Try it out" sends real
// requests; with a key configured, use Authorize (the key stays in the page's memory).
/** swagger-ui's bundle, loaded by a script tag before this one. */
const swaggerUi = /** @type {{ SwaggerUIBundle: (options: Record<string, unknown>) => unknown }} */ (
  /** @type {unknown} */ (window)
).SwaggerUIBundle;
swaggerUi({ url: '/api/openapi.json', dom_id: '#swagger-ui', deepLinking: true, tryItOutEnabled: false });
