import { createHash } from 'node:crypto';
import { COMPONENT_SCHEMA_PREFIX, type JsonSchema } from './schemas.js';
import type { OpenApiDocument, OpenApiOperation, OpenApiParameter, OpenApiResponse } from './document.js';
import { WEBHOOKS_TAG, type WebhookOperation } from './webhooks.js';

/**
 * The human-readable API reference at /docs, rendered on the server from the OpenAPI
 * document: one self-contained HTML page with no script at all and no external resource,
 * so it works offline and its Content-Security-Policy can forbid everything but its own
 * stylesheet (allowed by hash).
 */
export interface DocsPage {
  html: string;
  contentSecurityPolicy: string;
}

const STYLE = `
body{font:15px/1.5 system-ui,-apple-system,"Segoe UI",sans-serif;margin:0;color:#1b1f24;background:#fff}
header{background:#14213d;color:#fff;padding:24px 40px}header h1{margin:0 0 4px;font-size:26px}
header p{margin:0;opacity:.85}.layout{display:flex;align-items:flex-start}
nav{position:sticky;top:0;flex:0 0 260px;max-height:100vh;overflow:auto;padding:20px 24px;border-right:1px solid #e4e7eb;box-sizing:border-box}
nav ul{list-style:none;padding:0;margin:0 0 14px}nav li{margin:3px 0}nav h2{font-size:13px;text-transform:uppercase;letter-spacing:.05em;color:#57606a;margin:14px 0 6px}
nav a{color:#14213d;text-decoration:none}nav a:hover{text-decoration:underline}
main{flex:1;min-width:0;padding:8px 40px 60px;max-width:1000px}
h2{border-bottom:1px solid #e4e7eb;padding-bottom:6px;margin-top:40px}h3{margin:28px 0 8px}h4{margin:18px 0 6px}
code{font:13px/1.4 ui-monospace,SFMono-Regular,Menlo,monospace;background:#f3f4f6;padding:1px 4px;border-radius:4px}
pre{background:#f3f4f6;border-radius:6px;padding:10px 12px;overflow-x:auto;max-width:100%;box-sizing:border-box}pre code{padding:0;background:none;overflow-wrap:normal}
.method{display:inline-block;background:#2b7a4b;color:#fff;border-radius:4px;padding:1px 8px;font-size:13px;margin-right:8px}
table{border-collapse:collapse;width:100%;margin:6px 0 12px;font-size:14px}th,td{border:1px solid #e4e7eb;padding:5px 8px;text-align:left;vertical-align:top}
th{background:#f6f8fa}td.name{white-space:nowrap}.muted{color:#57606a}
details{border:1px solid #e4e7eb;border-radius:6px;margin:8px 0;padding:4px 12px}summary{cursor:pointer;font-weight:600;padding:4px 0}
.status{display:inline-block;min-width:38px}.ok{color:#2b7a4b}.err{color:#b42318}
@media (max-width:760px){
header{padding:18px 16px}.layout{display:block}
nav{position:static;max-height:none;border-right:0;border-bottom:1px solid #e4e7eb;padding:12px 16px}
nav ul{display:flex;flex-wrap:wrap;gap:4px 14px}main{padding:8px 16px 40px}
table{display:block;overflow-x:auto}td.name{white-space:normal}code{overflow-wrap:anywhere}pre code{overflow-wrap:normal}
}
`;

export function renderDocsPage(document: OpenApiDocument): DocsPage {
  const schemas = document.components.schemas;
  const operations = Object.entries(document.paths).flatMap(([path, methods]) =>
    Object.entries(methods).map(([method, operation]) => ({ path, method, operation })),
  );
  const tags = [...new Set(operations.flatMap(({ operation }) => operation.tags))];
  const server = (document.servers as Array<{ url: string }> | undefined)?.[0]?.url ?? '';

  const nav = [
    `<h2>Overview</h2><ul><li><a href="#overview">Introduction</a></li><li><a href="#errors">Errors</a></li></ul>`,
    ...tags.map(
      (tag) =>
        `<h2>${escape(tag)}</h2><ul>${operations
          .filter(({ operation }) => operation.tags.includes(tag))
          .map(
            ({ operation }) => `<li><a href="#${anchor(operation.operationId)}">${escape(operation.summary)}</a></li>`,
          )
          .join('')}</ul>`,
    ),
    webhooksNav(document),
    `<h2>Objects</h2><ul>${Object.keys(schemas)
      .map((name) => `<li><a href="#${schemaAnchor(name)}">${escape(name)}</a></li>`)
      .join('')}</ul>`,
    `<h2>Machine-readable</h2><ul><li><a href="/openapi.json">openapi.json</a></li></ul>`,
  ].join('');

  const body = [
    `<section id="overview"><h2>Introduction</h2>${markdown(document.info.description)}`,
    `<p>Base URL: <code>${escape(server)}</code></p></section>`,
    renderErrors(document),
    ...tags.map(
      (tag) =>
        `<section><h2>${escape(tag)}</h2>${operations
          .filter(({ operation }) => operation.tags.includes(tag))
          .map(({ path, method, operation }) => renderOperation(document, path, method, operation))
          .join('')}</section>`,
    ),
    renderWebhooks(document),
    `<section><h2>Objects</h2>${Object.entries(schemas)
      .map(
        ([name, schema]) =>
          `<h3 id="${schemaAnchor(name)}">${escape(name)}</h3>${markdown(text(schema.description))}${renderSchema(schema)}`,
      )
      .join('')}</section>`,
  ].join('');

  const html = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>${escape(document.info.title)}</title><style>${STYLE}</style></head>
<body><header><h1>${escape(document.info.title)}</h1><p>Version ${escape(document.info.version)} · OpenAPI ${escape(document.openapi)}</p></header>
<div class="layout"><nav>${nav}</nav><main>${body}</main></div></body></html>
`;
  const styleHash = createHash('sha256').update(STYLE).digest('base64');
  return {
    html,
    contentSecurityPolicy: [
      "default-src 'none'",
      `style-src 'sha256-${styleHash}'`,
      "base-uri 'none'",
      "form-action 'none'",
      "frame-ancestors 'none'",
    ].join('; '),
  };
}

function renderErrors(document: OpenApiDocument): string {
  const byStatus = new Map<string, OpenApiResponse>();
  for (const methods of Object.values(document.paths)) {
    for (const operation of Object.values(methods)) {
      for (const [status, entry] of Object.entries(operation.responses)) {
        if (status !== '200') byStatus.set(status, resolveResponse(document, entry));
      }
    }
  }
  const rows = [...byStatus]
    .sort(([a], [b]) => Number(a) - Number(b))
    .flatMap(([status, response]) =>
      errorTypesOf(response).map(
        (type) =>
          `<tr><td class="name"><code>${escape(type)}</code></td><td>${escape(status)}</td><td>${inline(conditionOf(response, type))}</td></tr>`,
      ),
    );
  return `<section id="errors"><h2>Errors</h2><p>Every error is <code>{"error": {"type": "…", "message": "…"}}</code>. Branch on <code>error.type</code>.</p>
<table><tr><th>error.type</th><th>HTTP status</th><th>When</th></tr>${rows.join('')}</table></section>`;
}

function resolveResponse(document: OpenApiDocument, entry: OpenApiResponse | { $ref: string }): OpenApiResponse {
  return '$ref' in entry ? document.components.responses[entry.$ref.split('/').pop()!]! : entry;
}

/** The `error.type` values an error response's schema allows. */
function errorTypesOf(response: OpenApiResponse): string[] {
  const schema = response.content['application/json'].schema as {
    properties?: { error?: { properties?: { type?: { enum?: string[] } } } };
  };
  return schema.properties?.error?.properties?.type?.enum ?? [];
}

/** The paragraph of an error response's description that starts with the type. */
function conditionOf(response: OpenApiResponse, type: string): string {
  const paragraph = response.description.split('\n\n').find((text) => text.startsWith(`\`${type}\`: `));
  return paragraph ? paragraph.slice(type.length + 4) : '';
}

function renderOperation(document: OpenApiDocument, path: string, method: string, operation: OpenApiOperation): string {
  const parameters = operation.parameters.length
    ? `<h4>Parameters</h4><table><tr><th>Name</th><th>In</th><th>Type</th><th>Description</th></tr>${operation.parameters
        .map(renderParameter)
        .join('')}</table>`
    : '<h4>Parameters</h4><p class="muted">None. Any query parameter is refused as <code>invalid_param</code>.</p>';
  const responses = Object.entries(operation.responses)
    .map(([status, entry]) => {
      const response = resolveResponse(document, entry);
      const headers = Object.keys(response.headers).map((name) => `<code>${escape(name)}</code>`);
      const ok = status === '200';
      const title = ok
        ? inline(response.description)
        : errorTypesOf(response)
            .map((type) => `<code>${escape(type)}</code>`)
            .join(', ');
      return `<details${ok ? ' open' : ''}><summary><span class="status ${ok ? 'ok' : 'err'}">${escape(status)}</span> ${title}</summary>
${ok ? '' : markdown(response.description)}<p class="muted">Headers: ${headers.join(', ')}</p>${renderBody(document, response.content['application/json'].schema)}</details>`;
    })
    .join('');
  return `<article id="${anchor(operation.operationId)}"><h3><span class="method">${escape(method.toUpperCase())}</span><code>${escape(path)}</code></h3>
<p><strong>${escape(operation.summary)}.</strong> ${inline(operation.description)}</p>${parameters}<h4>Responses</h4>${responses}</article>`;
}

function renderParameter(parameter: OpenApiParameter): string {
  return `<tr><td class="name"><code>${escape(parameter.name)}</code>${parameter.required ? '' : ' <span class="muted">optional</span>'}</td><td>${parameter.in}</td><td>${typeText(parameter.schema)}</td><td>${sentence(parameter.description)}${constraints(parameter.schema)}</td></tr>`;
}

/** A response body: its named object (linked) and that object's fields, so nobody has to scroll. */
function renderBody(document: OpenApiDocument, schema: JsonSchema): string {
  if (typeof schema.$ref !== 'string') return renderSchema(schema);
  const component = document.components.schemas[schema.$ref.slice(COMPONENT_SCHEMA_PREFIX.length)] ?? {};
  return `<p>${typeText(schema)}</p>${renderSchema(component)}`;
}

/** A schema as a table of its fields (nested objects flattened as `parent.child`), or one line. */
function renderSchema(schema: JsonSchema): string {
  if (schema.$ref || schema.type !== 'object') return `<p>${typeText(schema)}</p>`;
  return `<table><tr><th>Field</th><th>Type</th><th>Description</th></tr>${fieldRows(schema, '')}</table>`;
}

function fieldRows(schema: JsonSchema, prefix: string): string {
  const properties = (schema.properties ?? {}) as Record<string, JsonSchema>;
  const required = new Set((schema.required ?? []) as string[]);
  return Object.entries(properties)
    .map(([name, variants]) => {
      const property = mergeObjects(variants);
      const path = `${prefix}${name}`;
      const row = `<tr><td class="name"><code>${escape(path)}</code>${required.has(name) ? '' : ' <span class="muted">optional</span>'}</td><td>${typeText(property)}</td><td>${sentence(property.description)}${constraints(property)}</td></tr>`;
      return property.type === 'object' && property.properties ? row + fieldRows(property, `${path}.`) : row;
    })
    .join('');
}

/**
 * Alternatives that are all objects (recovery.lost's data: with `reason`, with `source`, or
 * neither) read as one object: every field any of them has, required when all require it.
 */
function mergeObjects(schema: JsonSchema): JsonSchema {
  const variants = schema.anyOf as JsonSchema[] | undefined;
  if (!Array.isArray(variants) || !variants.every((variant) => variant.type === 'object')) return schema;
  const properties = Object.assign({}, ...variants.map((variant) => variant.properties ?? {})) as JsonSchema;
  const required = Object.keys(properties).filter((name) =>
    variants.every((variant) => ((variant.required ?? []) as string[]).includes(name)),
  );
  return { type: 'object', description: schema.description, properties, required };
}

function typeText(schema: JsonSchema): string {
  if (typeof schema.$ref === 'string') {
    const name = schema.$ref.slice(COMPONENT_SCHEMA_PREFIX.length);
    return `<a href="#${schemaAnchor(name)}">${escape(name)}</a>`;
  }
  if (Array.isArray(schema.anyOf)) return (schema.anyOf as JsonSchema[]).map(typeText).join(' or ');
  if (schema.const !== undefined) return `<code>${escape(JSON.stringify(schema.const))}</code>`;
  if (schema.type === 'array') return `array of ${typeText((schema.items ?? {}) as JsonSchema)}`;
  const format = typeof schema.format === 'string' ? ` (${escape(schema.format)})` : '';
  return `${escape(text(schema.type) || 'any')}${format}`;
}

function constraints(schema: JsonSchema): string {
  const notes: string[] = [];
  if (Array.isArray(schema.enum))
    notes.push(`One of ${schema.enum.map((value) => `<code>${escape(String(value))}</code>`).join(', ')}.`);
  if (typeof schema.maxLength === 'number') notes.push(`At most ${schema.maxLength} characters.`);
  if (typeof schema.maxItems === 'number') notes.push(`At most ${schema.maxItems} items.`);
  if (Array.isArray(schema.anyOf)) notes.push(...(schema.anyOf as JsonSchema[]).map(constraints).filter(Boolean));
  return notes.length ? ` <span class="muted">${notes.join(' ')}</span>` : '';
}

/**
 * The small Markdown our descriptions use: paragraphs, `code`, **bold**, `### headings` (with
 * an id from their text) and fenced code blocks, shown as written.
 */
function markdown(text: string): string {
  return text
    .split(/^```[a-z]*\n([\s\S]*?)^```$/m)
    .map((part, index) =>
      index % 2 === 1
        ? `<pre><code>${escape(part.replace(/\n$/, ''))}</code></pre>`
        : part
            .split(/\n{2,}/)
            .map((paragraph) => paragraph.trim())
            .filter(Boolean)
            .map((paragraph) =>
              paragraph.startsWith('### ')
                ? `<h3 id="${headingAnchor(paragraph.slice(4))}">${inline(paragraph.slice(4))}</h3>`
                : `<p>${inline(paragraph.replace(/\n/g, ' '))}</p>`,
            )
            .join(''),
    )
    .join('');
}

/** The `### ` headings of a description. */
function headingsOf(text: string): string[] {
  return [...text.replace(/^```[a-z]*\n[\s\S]*?^```$/gm, '').matchAll(/^### (.+)$/gm)].map((match) => match[1]!);
}

function webhooksNav(document: OpenApiDocument): string {
  const tag = document.tags.find((candidate) => candidate.name === WEBHOOKS_TAG);
  const links = [
    `<li><a href="#webhooks">Receiving webhooks</a></li>`,
    ...headingsOf(tag?.description ?? '').map(
      (heading) => `<li><a href="#${headingAnchor(heading)}">${inline(heading)}</a></li>`,
    ),
    `<li><a href="#webhook-request">The request</a></li>`,
    ...Object.keys(document.webhooks).map(
      (type) => `<li><a href="#${webhookAnchor(type)}"><code>${escape(type)}</code></a></li>`,
    ),
  ];
  return `<h2>Webhooks</h2><ul>${links.join('')}</ul>`;
}

/**
 * The Webhooks section: the tag's description (signature, snippets, retries), the request's
 * headers and the answers it expects (the same for every type), then each type with its body.
 */
function renderWebhooks(document: OpenApiDocument): string {
  const tag = document.tags.find((candidate) => candidate.name === WEBHOOKS_TAG);
  const webhooks = Object.entries(document.webhooks).map(([type, { post }]) => ({ type, post }));
  const first = webhooks[0]?.post;
  if (!first) return '';
  const headers = `<table><tr><th>Header</th><th>Value</th><th>Description</th></tr>${[
    ...first.parameters.map(
      (parameter) =>
        `<tr><td class="name"><code>${escape(parameter.name)}</code></td><td>${headerValue(parameter.schema)}</td><td>${inline(parameter.description)}</td></tr>`,
    ),
    ...Object.entries(first.requestBody.content).map(
      ([type]) =>
        `<tr><td class="name"><code>Content-Type</code></td><td><code>${escape(type)}</code></td><td>The body is JSON.</td></tr>`,
    ),
  ].join('')}</table>`;
  const answers = `<table><tr><th>Your answer</th><th>What happens</th></tr>${Object.entries(first.responses)
    .map(
      ([status, response]) =>
        `<tr><td class="name">${status === 'default' ? 'Anything else' : escape(status)}</td><td>${inline(response.description)}</td></tr>`,
    )
    .join('')}</table>`;
  return `<section id="webhooks"><h2>Webhooks</h2>${markdown(tag?.description ?? '')}
<h3 id="webhook-request">The request</h3><p>Every delivery is a <code>POST</code> to the endpoint’s URL with these headers; its body is described under each type below.</p>${headers}<h4>Answers</h4>${answers}
${webhooks.map(({ type, post }) => renderWebhook(type, post)).join('')}</section>`;
}

function renderWebhook(type: string, post: WebhookOperation): string {
  const { schema, example } = post.requestBody.content['application/json'];
  return `<article id="${webhookAnchor(type)}"><h3><span class="method">POST</span><code>${escape(type)}</code></h3>
${markdown(post.description)}<h4>Body</h4>${renderSchema(schema)}<details><summary>Example</summary><pre><code>${escape(JSON.stringify(example, null, 2))}</code></pre></details></article>`;
}

/** A header's value: its fixed value, or its pattern. */
function headerValue(schema: JsonSchema): string {
  if (typeof schema.const === 'string') return `<code>${escape(schema.const)}</code>`;
  if (typeof schema.pattern === 'string') return `matches <code>${escape(schema.pattern)}</code>`;
  return typeText(schema);
}

function inline(text: string): string {
  return escape(text)
    .replace(/`([^`]+)`/g, '<code>$1</code>')
    .replace(/\*\*([^*]+)\*\*/g, '<strong>$1</strong>');
}

function escape(text: string): string {
  return text
    .replaceAll('&', '&amp;')
    .replaceAll('<', '&lt;')
    .replaceAll('>', '&gt;')
    .replaceAll('"', '&quot;')
    .replaceAll("'", '&#39;');
}

/** A description as a sentence, so the constraints that follow it read apart. */
function sentence(description: unknown): string {
  const words = text(description);
  return inline(words && !/[.!?]$/.test(words) ? `${words}.` : words);
}

/** A schema keyword's value when it is text, else nothing. */
const text = (value: unknown): string => (typeof value === 'string' ? value : '');

const anchor = (id: string) => `op-${id.replace(/[^A-Za-z0-9_-]/g, '')}`;
const webhookAnchor = (type: string) => `webhook-${type.replace(/[^A-Za-z0-9_-]/g, '-')}`;
const headingAnchor = (heading: string) => `webhooks-${heading.toLowerCase().replace(/[^a-z0-9]+/g, '-')}`;
const schemaAnchor = (name: string) => `schema-${name.replace(/[^A-Za-z0-9_-]/g, '')}`;
