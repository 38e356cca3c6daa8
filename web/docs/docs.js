// The docs page: swagger-ui over this service's own OpenAPI document. "Try it out" sends real
// requests; with a key configured, use Authorize (the key stays in the page's memory).
/* global SwaggerUIBundle */
SwaggerUIBundle({ url: '/api/openapi.json', dom_id: '#swagger-ui', deepLinking: true, tryItOutEnabled: false });
